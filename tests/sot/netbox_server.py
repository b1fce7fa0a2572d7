"""A real NetBox for tests and bench/sot_bench.py: NetBox from PyPI in its own Python 3.12 venv, Debian's
PostgreSQL and Redis, everything on 127.0.0.1 ports picked free, every process started here and stopped by pid.

Why each step is the way it is (measured on the 2-core CI machine kind, NEXT_WAVE.md section C):
- NetBox 4.7's wheel needs Python >= 3.12; the machines carry pyenv's 3.12 (the default python3 is 3.11).
  The venv (551 MB, ~70-130 s of pip) is kept under the cache dir keyed on the NetBox version.
- `netbox migrate` is the slow part (336 migrations, 4-12 min on 2 cores). Two things spare it:
  - the migrated PostgreSQL data directory is kept as a tarball keyed on the NetBox and PostgreSQL versions; a
    later session on the same machine unpacks it in seconds;
  - a machine with no cache (CI's clean one) loads `netbox-<version>-migrated.sql.gz` beside this file first:
    NetBox's own migrated schema, dumped by pg_dump (`python3 tests/sot/netbox_server.py --write-seed`, which
    migrates from nothing to make it). `netbox migrate` still runs after it, so NetBox itself checks the
    result (and applies anything the seed lacks); a seed that does not load is dropped and NetBox migrates
    from nothing, as before. It holds only what migrate writes: migration records, content types and
    permissions, no user or token.
- PostgreSQL runs with fsync off: a throwaway test database, and the cost that matters here is NetBox's, not
  the disk's.
- Nothing listens beyond loopback; teardown stops only the pids this module started.

Cache dir: $NETFAB_TEST_CACHE, else ~/.cache/netfab-tests. Python 3.12: $NETFAB_PYTHON312, else pyenv's, else
`python3.12` on PATH.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import gzip
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

NETBOX_VERSION = "4.7.3"
TOKEN_FILE = "token"
MIGRATE_TIMEOUT_S = 30 * 60
SEED = Path(__file__).with_name(f"netbox-{NETBOX_VERSION}-migrated.sql.gz")


class CannotStart(RuntimeError):
    """NetBox cannot be brought up on this machine; the message says what is missing (tests skip with it)."""


@dataclass
class NetBoxServer:
    url: str
    token: str
    root: Path
    pids: list[int] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    _procs: list[subprocess.Popen[bytes]] = field(default_factory=list, repr=False)

    def stop(self) -> None:
        """Stop what this module started, newest first, by pid: NetBox, Redis, PostgreSQL."""
        for proc in reversed(self._procs):
            if proc.poll() is not None:
                continue
            # PostgreSQL: SIGINT is its "fast" shutdown (no waiting for clients).
            proc.send_signal(signal.SIGINT if "postgres" in str(proc.args) else signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        self._procs.clear()
        shutil.rmtree(self.root, ignore_errors=True)


def cache_dir() -> Path:
    return Path(os.environ.get("NETFAB_TEST_CACHE") or Path.home() / ".cache" / "netfab-tests")


def find_python312() -> str:
    candidates = [os.environ.get("NETFAB_PYTHON312", "")]
    pyenv_root = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    candidates += sorted(glob.glob(f"{pyenv_root}/versions/3.12*/bin/python3.12"), reverse=True)
    candidates.append(shutil.which("python3.12") or "")
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise CannotStart("no Python 3.12 (NetBox 4.7 needs >= 3.12): set NETFAB_PYTHON312 or install pyenv's 3.12")


def _postgres_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda p: int(Path(p).parts[4]))
    if not found:
        raise CannotStart("no PostgreSQL server (apt-get install postgresql)")
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One installer at a time per cache entry (two pytest sessions, or the bench beside a test run)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _run(cmd: list[str], what: str, timeout: float, **kwargs: object) -> None:
    try:
        done = subprocess.run(cmd, capture_output=True, timeout=timeout, check=False, **kwargs)  # type: ignore[call-overload]
    except subprocess.TimeoutExpired:
        raise CannotStart(f"{what}: no answer after {timeout:.0f} s") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout or b"").decode(errors="replace").strip().splitlines()[-5:]
        raise CannotStart(f"{what} failed (exit {done.returncode}): {' | '.join(tail)}")


def ensure_venv(timings: dict[str, float]) -> Path:
    venv = cache_dir() / f"netbox-{NETBOX_VERSION}" / "venv"
    with _locked(venv.parent / ".lock"):
        if (venv / "bin" / "netbox").exists() and (venv / ".complete").exists():
            return venv
        start = time.monotonic()
        shutil.rmtree(venv, ignore_errors=True)
        _run([find_python312(), "-m", "venv", str(venv)], "creating the Python 3.12 venv", 120)
        _run(
            [str(venv / "bin" / "pip"), "install", "-q", f"netbox=={NETBOX_VERSION}"],
            f"pip install netbox=={NETBOX_VERSION}",
            1200,
        )
        (venv / ".complete").write_text(NETBOX_VERSION)
        timings["pip_install_s"] = time.monotonic() - start
    return venv


def _as_postgres() -> dict[str, object]:
    """initdb and postgres refuse to run as root: drop to the postgres user when we are root."""
    if os.geteuid() != 0:
        return {}
    import pwd

    try:
        pw = pwd.getpwnam("postgres")
    except KeyError:
        raise CannotStart("running as root but there is no 'postgres' user (apt-get install postgresql)") from None
    return {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}


def _chown_tree(path: Path, drop: dict[str, object]) -> None:
    if not drop:
        return
    uid, gid = int(drop["user"]), int(drop["group"])  # type: ignore[call-overload]
    for dirpath, _dirs, files in os.walk(path):
        os.chown(dirpath, uid, gid)
        for name in files:
            os.chown(os.path.join(dirpath, name), uid, gid)


def _wait_for(check: object, what: str, timeout: float, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise CannotStart(f"{what} exited with {proc.returncode} while starting")
        if check():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise CannotStart(f"{what} did not come up within {timeout:.0f} s")


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _configuration(db_port: int, redis_port: int) -> str:
    return f"""# Written by tests/sot/netbox_server.py: a throwaway NetBox on loopback.
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
DATABASE = {{"NAME": "netbox", "USER": "postgres", "PASSWORD": "", "HOST": "127.0.0.1", "PORT": {db_port},
            "CONN_MAX_AGE": 300}}
REDIS = {{
    "tasks": {{"HOST": "127.0.0.1", "PORT": {redis_port}, "DATABASE": 0, "SSL": False}},
    "caching": {{"HOST": "127.0.0.1", "PORT": {redis_port}, "DATABASE": 1, "SSL": False}},
}}
SECRET_KEY = {secrets.token_urlsafe(48)!r}
API_TOKEN_PEPPERS = {{1: {secrets.token_urlsafe(48)!r}}}
LOGIN_REQUIRED = True
"""


_TOKEN_SCRIPT = """
from django.contrib.auth import get_user_model
from users.models import Token
User = get_user_model()
# NetBox 4.7's User has no is_staff (users migration 0013): a superuser is all the API needs.
user, _ = User.objects.get_or_create(username="netfab-test", defaults={"is_superuser": True})
user.is_superuser = True
user.save()
plaintext = Token.generate()
token = Token(user=user, token=plaintext, write_enabled=True)
token.save()
with open(OUT, "w") as handle:
    # The v2 form a client sends as "Authorization: Bearer nbt_<key>.<secret>".
    handle.write("nbt_" + token.key + "." + plaintext)
"""


def start(workers: int = 3) -> NetBoxServer:
    """Bring up PostgreSQL, Redis and NetBox (gunicorn, `workers` processes) and return the API's URL and a
    write token. Raises CannotStart with the reason when this machine cannot."""
    timings: dict[str, float] = {}
    t0 = time.monotonic()
    redis_bin = shutil.which("redis-server")
    if redis_bin is None:
        raise CannotStart("no redis-server (apt-get install redis-server)")
    pg_bin = _postgres_bin()
    venv = ensure_venv(timings)
    drop = _as_postgres()
    root = Path(tempfile.mkdtemp(prefix="netfab-netbox-"))
    os.chmod(root, 0o755)
    server = NetBoxServer(url="", token="", root=root, timings=timings)
    cached = _pg_cache(pg_bin)
    # The first session migrates and keeps the result; a second one started meanwhile waits for it rather
    # than migrate a second time on the same two cores.
    first = _locked(cached.with_suffix(".lock")) if not cached.exists() else contextlib.nullcontext()
    try:
        with first:
            _start_services(server, venv, pg_bin, redis_bin, drop, workers)
    except BaseException:
        server.stop()
        raise
    timings["total_s"] = time.monotonic() - t0
    return server


def _pg_cache(pg_bin: Path) -> Path:
    return cache_dir() / f"netbox-{NETBOX_VERSION}" / f"pgdata-pg{pg_bin.parts[4]}-migrated.tar"


def _unpack_cluster(cached: Path, root: Path, drop: dict[str, object]) -> Path:
    """The cached migrated cluster as root/pgdata, owned by postgres with the mode PostgreSQL demands."""
    with tarfile.open(cached) as tar:
        tar.extractall(root, filter="fully_trusted")
    pgdata = root / "pgdata"
    _chown_tree(pgdata, drop)
    os.chmod(pgdata, 0o700)
    return pgdata


def _postgres(
    pg_bin: Path, pgdata: Path, port: int, sockets: Path, drop: dict[str, object], log_path: Path
) -> subprocess.Popen[bytes]:
    """PostgreSQL on `pgdata`, loopback only, as the postgres user; the caller waits for its port."""
    cmd = [str(pg_bin / "postgres"), "-D", str(pgdata), "-h", "127.0.0.1", "-p", str(port)]
    cmd += ["-k", str(sockets), "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
    log = open(log_path, "wb")  # noqa: SIM115 - the child keeps it open
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, **drop)  # type: ignore[call-overload, no-any-return]


def _pg_args(db_port: int) -> list[str]:
    return ["-h", "127.0.0.1", "-p", str(db_port), "-U", "postgres"]


def _createdb(pg_bin: Path, db_port: int) -> None:
    _run([str(pg_bin / "createdb"), *_pg_args(db_port), "netbox"], "createdb", 60)


def _load_seed(pg_bin: Path, db_port: int) -> bool:
    """SEED into the empty `netbox` database, in one transaction: True if all of it loaded, False (and the
    database left as PostgreSQL rolled it back) if psql refused any of it."""
    psql = [str(pg_bin / "psql"), *_pg_args(db_port), "-q", "-X", "-v", "ON_ERROR_STOP=1"]
    with gzip.open(SEED, "rb") as seed:
        sql = seed.read()
    try:
        done = subprocess.run([*psql, "--single-transaction", "-d", "netbox"], input=sql, capture_output=True,
                              timeout=300, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        why = "no answer after 300 s"
    else:
        if done.returncode == 0:
            return True
        why = " | ".join(done.stderr.decode(errors="replace").strip().splitlines()[-3:])
    # Not fatal (NetBox migrates from nothing instead), but said: a stale seed costs every clean run minutes.
    warnings.warn(f"NetBox seed {SEED.name} did not load ({why}); migrating from nothing", stacklevel=2)
    return False


def write_seed(path: Path = SEED) -> None:
    """Migrate a NetBox from nothing (no cache, no seed) and write the database as it stood right after
    `netbox migrate` (the cache tarball, made before the API user and token exist) to `path`: pg_dump's plain
    SQL without owners or grants (the test cluster's only role is postgres), gzip'd."""
    os.environ["NETFAB_NETBOX_SEED"] = "0"
    pg_bin = _postgres_bin()
    drop = _as_postgres()
    with tempfile.TemporaryDirectory(prefix="netbox-seed-") as tmp:
        cache = Path(tmp) / "cache"
        os.environ["NETFAB_TEST_CACHE"] = str(cache)
        venv = Path.home() / ".cache" / "netfab-tests" / f"netbox-{NETBOX_VERSION}" / "venv"
        if (venv / ".complete").exists():  # the pip install is not what is being made here: reuse it
            (cache / f"netbox-{NETBOX_VERSION}").mkdir(parents=True)
            (cache / f"netbox-{NETBOX_VERSION}" / "venv").symlink_to(venv)
        start(workers=1).stop()
        root = Path(tmp) / "db"
        root.mkdir(mode=0o755)
        os.chmod(tmp, 0o755)
        pgdata = _unpack_cluster(_pg_cache(pg_bin), root, drop)
        sockets = root / "pgsock"
        sockets.mkdir()
        _chown_tree(sockets, drop)
        port = _free_port()
        pg = _postgres(pg_bin, pgdata, port, sockets, drop, root / "postgres.log")
        try:
            _wait_for(lambda: _port_open(port), "PostgreSQL", 60, pg)
            dump = subprocess.run(
                [str(pg_bin / "pg_dump"), *_pg_args(port), "--no-owner", "--no-privileges", "netbox"],
                capture_output=True, timeout=300, check=True,
            )  # fmt: skip
        finally:
            pg.send_signal(signal.SIGINT)
            pg.wait(timeout=60)
    partial = path.with_suffix(".partial")
    with gzip.GzipFile(partial, "wb", mtime=0) as out:
        out.write(dump.stdout)
    partial.replace(path)


def _start_services(
    server: NetBoxServer, venv: Path, pg_bin: Path, redis_bin: str, drop: dict[str, object], workers: int
) -> None:
    root, timings = server.root, server.timings
    db_port, redis_port, http_port = _free_port(), _free_port(), _free_port()
    pgdata, sockets = root / "pgdata", root / "pgsock"
    sockets.mkdir()
    _chown_tree(sockets, drop)
    cached = _pg_cache(pg_bin)
    migrated = cached.exists()
    start = time.monotonic()
    if migrated:
        _unpack_cluster(cached, root, drop)
    else:
        pgdata.mkdir(mode=0o700)
        _chown_tree(pgdata, drop)
        _run(
            [str(pg_bin / "initdb"), "-D", str(pgdata), "-U", "postgres", "--auth=trust", "-E", "UTF8"],
            "initdb",
            120,
            **drop,
        )
    timings["database_files_s"] = time.monotonic() - start

    def postgres() -> subprocess.Popen[bytes]:
        proc = _postgres(pg_bin, pgdata, db_port, sockets, drop, root / "postgres.log")
        server._procs.append(proc)
        server.pids.append(proc.pid)
        _wait_for(lambda: _port_open(db_port), "PostgreSQL", 60, proc)
        return proc

    pg = postgres()
    redis_log = open(root / "redis.log", "wb")  # noqa: SIM115
    redis = subprocess.Popen(
        [redis_bin, "--bind", "127.0.0.1", "--port", str(redis_port), "--save", "", "--appendonly", "no"],
        stdout=redis_log,
        stderr=subprocess.STDOUT,
        cwd=root,
    )
    server._procs.append(redis)
    server.pids.append(redis.pid)
    _wait_for(lambda: _port_open(redis_port), "Redis", 30, redis)

    conf = root / "netbox" / "conf"
    conf.mkdir(parents=True)
    (conf / "configuration.py").write_text(_configuration(db_port, redis_port))
    env = {**os.environ, "NETBOX_ROOT": str(root / "netbox"), "DJANGO_SETTINGS_MODULE": "netbox.settings"}
    env.pop("PYTHONPATH", None)
    netbox = str(venv / "bin" / "netbox")
    if not migrated:
        start = time.monotonic()
        _createdb(pg_bin, db_port)
        if SEED.is_file() and os.environ.get("NETFAB_NETBOX_SEED") != "0":
            seeded = _load_seed(pg_bin, db_port)
            timings["seed_s"] = time.monotonic() - start
            if not seeded:  # a seed this PostgreSQL cannot load: start again from an empty database
                _run([str(pg_bin / "dropdb"), *_pg_args(db_port), "netbox"], "dropdb", 60)
                _createdb(pg_bin, db_port)
        # Bounded so a starved machine skips the live tests with the reason instead of eating CI's 90 minutes
        # (measured: about 5 min on 2 quiet cores, 60 min at load 11-13; after the seed, seconds).
        _run([netbox, "migrate", "--no-input"], "netbox migrate", MIGRATE_TIMEOUT_S, env=env)
        timings["migrate_s"] = time.monotonic() - start
        # Keep the migrated cluster for later sessions: stop it cleanly first, so the copy is consistent.
        pg.send_signal(signal.SIGINT)
        pg.wait(timeout=60)
        server._procs.remove(pg)
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(".partial")
        with tarfile.open(partial, "w") as tar:
            tar.add(pgdata, arcname="pgdata")
        partial.replace(cached)
        pg = postgres()
    start = time.monotonic()
    token_file = root / TOKEN_FILE
    script = f"OUT = {str(token_file)!r}\n" + _TOKEN_SCRIPT
    _run([netbox, "shell", "--no-startup", "-c", script], "creating the API token", 300, env=env)
    server.token = token_file.read_text().strip()
    token_file.unlink()
    timings["token_s"] = time.monotonic() - start

    start = time.monotonic()
    gunicorn_log = open(root / "gunicorn.log", "wb")  # noqa: SIM115
    gunicorn = subprocess.Popen(
        [
            str(venv / "bin" / "gunicorn"),
            "--bind",
            f"127.0.0.1:{http_port}",
            "--workers",
            str(workers),
            "--timeout",
            "300",
            "--max-requests",
            "0",
            "netbox.wsgi",
        ],
        stdout=gunicorn_log,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=root,
    )
    server._procs.append(gunicorn)
    server.pids.append(gunicorn.pid)
    server.url = f"http://127.0.0.1:{http_port}"

    def ready() -> bool:
        request = urllib.request.Request(
            f"{server.url}/api/status/", headers={"Authorization": f"Bearer {server.token}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    _wait_for(ready, "NetBox (gunicorn)", 180, gunicorn)
    timings["http_ready_s"] = time.monotonic() - start


if __name__ == "__main__":  # bring one up by hand: python3 tests/sot/netbox_server.py
    if sys.argv[1:] == ["--write-seed"]:  # remake SEED (after a NetBox version change): migrates from nothing
        write_seed()
        print(f"wrote {SEED}")
        sys.exit(0)
    nb = start()
    # For a developer's shell on this machine only (a throwaway token of a loopback NetBox):
    # NETFAB_TEST_NETBOX_URL/_TOKEN let the tests and bench/sot_bench.py use this instance.
    (nb.root / "token").write_text(nb.token)
    print(f"url={nb.url} token file={nb.root / 'token'} pids={nb.pids} timings={nb.timings}", flush=True)
    try:
        signal.pause()
    finally:
        nb.stop()
