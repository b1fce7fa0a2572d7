"""The NetBox connection: pynetbox's session, the token from the environment, TLS verified, bulk and threaded.

Reads page through a list endpoint with a fixed page size and fetch the pages after the first in parallel
(pynetbox's own threading does the same; it is done here so every page is a plain dict and `fields=` trims
what NetBox serialises, which is most of a large read's cost). Writes send lists of objects per request
(NetBox's bulk create/update) in chunks, several chunks at a time. Errors become `NetBoxError`, whose text
never carries the token.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final, Protocol
from urllib.parse import urlsplit

from netfab.core.redact import redact

TOKEN_ENV: Final = "NETFAB_NETBOX_TOKEN"
PAGE: Final = 1000
CHUNK: Final = 50
"""Objects per bulk write: NetBox validates and saves a bulk request in one transaction, so one bad object
fails only its chunk, and chunks spread over the server's workers. Small enough that a chunk finishes inside
a gunicorn worker timeout on a busy server (NetBox's sample gunicorn.py: 120 s): 200 devices took over 300 s
on 2 loaded cores (measured), and the worker was killed mid-request."""

Record = dict[str, Any]


class Api(Protocol):
    """What push and pull need from NetBox (NetBox below; the tests' recorded stand-in too)."""

    url: str

    def get(self, path: str, filters: dict[str, Any] | None = None, fields: Sequence[str] = ()) -> list[Record]: ...

    def get_many(
        self, path: str, key: str, values: Iterable[Any], fields: Sequence[str] = (), per_request: int = 100
    ) -> list[Record]: ...

    def create(self, path: str, objects: Sequence[Record]) -> list[int]: ...

    def update(self, path: str, objects: Sequence[Record]) -> list[int]: ...


def _ignore(count: int) -> None:
    pass


class NetBoxError(RuntimeError):
    """NetBox refused or could not be reached. `usage` marks what the operator must fix (URL, token, TLS)."""

    def __init__(self, message: str, usage: bool = False) -> None:
        super().__init__(message)
        self.usage = usage


def token_from_env(environ: dict[str, str] | None = None) -> str:
    token = (environ if environ is not None else dict(os.environ)).get(TOKEN_ENV, "").strip()
    if not token:
        raise NetBoxError(
            f"no NetBox API token: set {TOKEN_ENV} (a token is never read from a file or the command line)",
            usage=True,
        )
    return token


def check_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise NetBoxError(f"--netbox {url!r}: expected an http(s) URL such as https://netbox.example.net", usage=True)
    if parts.username or parts.password:
        raise NetBoxError("--netbox: put no credentials in the URL; the token comes from " + TOKEN_ENV, usage=True)
    return url.rstrip("/")


@dataclass(frozen=True, slots=True)
class Options:
    url: str
    token: str
    verify_tls: bool = True
    workers: int = 4
    timeout_s: float = 120.0


def _session(verify_tls: bool) -> Any:
    """requests' Session with two environment lookups closed:
    - REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE replace a session's `verify=False` with a CA path on every request
      (requests' merge_environment_settings), so --insecure-skip-tls-verify would silently still verify on
      any machine that sets them (CI images do). Verification, when on, still honours them;
    - ~/.netrc: requests takes credentials from it for a request without auth, and its Basic header would
      replace the token's. Credentials come from the environment only, so the session's auth is a no-op."""
    import requests

    class _NoNetrc(requests.auth.AuthBase):
        def __call__(self, r: Any) -> Any:
            return r

    class Session(requests.Session):
        def merge_environment_settings(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
            settings: dict[str, Any] = super().merge_environment_settings(*args, **kwargs)
            if self.verify is False:
                settings["verify"] = False
            return settings

    session = Session()
    session.verify = verify_tls
    session.auth = _NoNetrc()
    return session


class NetBox:
    """One NetBox API; `get`/`create`/`update` on endpoint paths like 'dcim/devices'."""

    def __init__(self, options: Options) -> None:
        import pynetbox
        import requests

        self.options = options
        self.url = check_url(options.url)
        self._api = pynetbox.api(self.url, token=options.token)
        session = _session(options.verify_tls)
        self._api.http_session = session
        # Big enough for every worker thread: requests' default pool of 10 would serialise larger pools.
        adapter = requests.adapters.HTTPAdapter(pool_connections=4, pool_maxsize=max(10, options.workers * 2))
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        self._session = session
        # NetBox 4 v2 tokens ("nbt_<key>.<secret>") are sent as Bearer, v1 tokens as "Token" (as pynetbox does).
        scheme = "Bearer" if options.token.startswith("nbt_") else "Token"
        self._headers = {"authorization": f"{scheme} {options.token}", "accept": "application/json"}
        self._pool = ThreadPoolExecutor(max_workers=options.workers, thread_name_prefix="netbox")

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self._session.close()

    def __enter__(self) -> NetBox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- transport ---------------------------------------------------------------------------------
    def _call(self, method: str, path: str, params: dict[str, Any] | None = None, body: Any = None) -> Any:
        import requests

        url = f"{self.url}/api/{path.strip('/')}/"
        try:
            response = self._session.request(
                method, url, params=params, json=body, headers=self._headers, timeout=self.options.timeout_s
            )
        except requests.exceptions.SSLError as exc:
            raise NetBoxError(
                f"{self.url}: TLS verification failed ({exc.__class__.__name__}); fix the certificate (or "
                "REQUESTS_CA_BUNDLE), or for a lab NetBox only pass --insecure-skip-tls-verify",
                usage=True,
            ) from None
        except requests.exceptions.RequestException as exc:
            raise NetBoxError(self._redact(f"{self.url}: cannot reach NetBox: {exc}"), usage=True) from None
        if response.status_code in (401, 403):
            raise NetBoxError(
                f"{self.url}: NetBox refused the token from {TOKEN_ENV} ({response.status_code}: "
                f"{self._redact(response.text[:200])})",
                usage=True,
            )
        if not response.ok:
            raise NetBoxError(
                self._redact(f"{method} {path}: NetBox answered {response.status_code}: {response.text[:2000]}")
            )
        if method == "DELETE" or not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise NetBoxError(f"{self.url}: not a NetBox API (answer is not JSON): {response.text[:120]!r}") from None

    def _redact(self, text: str) -> str:
        return redact(text, [self.options.token])

    def status(self) -> Record:
        answer = self._call("GET", "status")
        if not isinstance(answer, dict) or "netbox-version" not in answer:
            raise NetBoxError(f"{self.url}: /api/status/ does not look like NetBox's", usage=True)
        return answer

    # --- reads -------------------------------------------------------------------------------------
    def get(self, path: str, filters: dict[str, Any] | None = None, fields: Sequence[str] = ()) -> list[Record]:
        """Every object of a list endpoint that matches `filters` (all pages)."""
        params: dict[str, Any] = {**(filters or {}), "limit": PAGE, "offset": 0}
        if fields:
            params["fields"] = ",".join(fields)
        first = self._call("GET", path, params)
        results: list[Record] = list(first["results"])
        count = int(first.get("count") or 0)
        if first.get("next") and count > len(results):
            offsets = range(len(results), count, PAGE)

            def page(offset: int) -> list[Record]:
                return list(self._call("GET", path, {**params, "offset": offset})["results"])

            for chunk in self._pool.map(page, offsets):
                results.extend(chunk)
        return results

    def get_many(
        self, path: str, key: str, values: Iterable[Any], fields: Sequence[str] = (), per_request: int = 100
    ) -> list[Record]:
        """Objects whose `key` is one of `values` (NetBox ORs repeated filters), a bounded URL at a time."""
        wanted = list(dict.fromkeys(values))
        chunks = [wanted[i : i + per_request] for i in range(0, len(wanted), per_request)]
        out: list[Record] = []
        # Its own pool: each chunk's get() hands its further pages to self._pool and waits for them, so the
        # chunks must not occupy self._pool's workers themselves (that waits forever once all are busy).
        with ThreadPoolExecutor(max_workers=self.options.workers, thread_name_prefix="netbox-many") as pool:
            for part in pool.map(lambda chunk: self.get(path, {key: chunk}, fields), chunks):
                out.extend(part)
        return out

    # --- writes ------------------------------------------------------------------------------------
    def _endpoint(self, path: str) -> Any:
        app, name = path.split("/")
        return getattr(getattr(self._api, app), name.replace("-", "_"))

    def _bulk(self, verb: str, path: str, objects: Sequence[Record], on_done: Callable[[int], None]) -> list[int]:
        """pynetbox's bulk create/update (one request per chunk), chunks sent by the thread pool; the ids of
        the objects, in the order given."""
        import pynetbox
        import requests

        endpoint = self._endpoint(path)
        chunks = [list(objects[i : i + CHUNK]) for i in range(0, len(objects), CHUNK)]

        def send(chunk: list[Record]) -> list[int]:
            try:
                records = getattr(endpoint, verb)(chunk)
            except pynetbox.RequestError as exc:
                raise NetBoxError(self._redact(f"{verb} {path}: NetBox refused: {exc.error}")) from None
            except requests.exceptions.RequestException as exc:
                raise NetBoxError(self._redact(f"{self.url}: cannot reach NetBox: {exc}"), usage=True) from None
            on_done(len(chunk))
            return [int(r.id) for r in records]

        out: list[int] = []
        for ids in self._pool.map(send, chunks):
            out.extend(ids)
        return out

    def create(self, path: str, objects: Sequence[Record], on_done: Callable[[int], None] = _ignore) -> list[int]:
        """Bulk POST; returns the new objects' ids in the order given."""
        return self._bulk("create", path, objects, on_done)

    def update(self, path: str, objects: Sequence[Record], on_done: Callable[[int], None] = _ignore) -> list[int]:
        """Bulk PATCH: each object carries its `id` and only the fields that change."""
        return self._bulk("update", path, objects, on_done)
