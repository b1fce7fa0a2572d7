"""Recorded NetBox API answers for the fast tests: a NetBox stand-in that replays what a real NetBox 4.7 said.

tiny-empty is what a push of tiny.yaml read from a NetBox other fabrics had been pushed to (its
vocabulary there, this fabric not), tiny-pushed what a second push and a pull read after the push.
`Recorder` wraps a live client and keeps every read's answer by endpoint and filters; `Replay` answers the
same reads from the file and records the writes it is asked for (a test then checks there were none, or
which). Re-record with `python3 -m tests.sot.recorded` (it brings up the real NetBox, pushes
tests/sot/intents/tiny.yaml and records what a second push and a pull read).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from netfab.sot.client import NetBox, Record

RECORDINGS = Path(__file__).parent / "recordings"


def _key(path: str, filters: dict[str, Any] | None, fields: Sequence[str]) -> str:
    return json.dumps([path, {k: v for k, v in sorted((filters or {}).items())}, list(fields)], sort_keys=True)


class Recorder:
    def __init__(self, nb: NetBox) -> None:
        self.nb = nb
        self.answers: dict[str, list[Record]] = {}
        self.url = nb.url

    def status(self) -> Record:
        return self.nb.status()

    def get(self, path: str, filters: dict[str, Any] | None = None, fields: Sequence[str] = ()) -> list[Record]:
        answer = self.nb.get(path, filters, fields)
        self.answers[_key(path, filters, fields)] = answer
        return answer

    def get_many(
        self, path: str, key: str, values: Iterable[Any], fields: Sequence[str] = (), per_request: int = 100
    ) -> list[Record]:
        values = list(values)
        answer = self.nb.get_many(path, key, values, fields, per_request)
        self.answers[_key(path, {key: values}, fields)] = answer
        return answer

    def create(self, path: str, objects: Sequence[Record]) -> list[int]:
        return self.nb.create(path, objects)

    def update(self, path: str, objects: Sequence[Record]) -> list[int]:
        return self.nb.update(path, objects)

    def save(self, name: str) -> Path:
        RECORDINGS.mkdir(exist_ok=True)
        out = RECORDINGS / f"{name}.json"
        # The recording names the stand-in's URL, not the live instance's (nested objects carry their URL).
        text = json.dumps(self.answers, indent=1, sort_keys=True).replace(self.url, Replay.url)
        out.write_text(text + "\n", encoding="utf-8")
        return out


class Replay:
    """Answers reads from a recording; an unrecorded read is an empty list (what NetBox says for objects it
    does not have). Writes are kept in `writes` and get fresh ids."""

    url = "http://netbox.recorded"

    def __init__(self, name: str) -> None:
        self.answers: dict[str, list[Record]] = json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))
        self.writes: list[tuple[str, str, list[Record]]] = []
        self._next = 10_000_000

    def status(self) -> Record:
        return {"netbox-version": "4.7.3"}

    def get(self, path: str, filters: dict[str, Any] | None = None, fields: Sequence[str] = ()) -> list[Record]:
        return json.loads(json.dumps(self.answers.get(_key(path, filters, fields), [])))

    def get_many(
        self, path: str, key: str, values: Iterable[Any], fields: Sequence[str] = (), per_request: int = 100
    ) -> list[Record]:
        return self.get(path, {key: list(values)}, fields)

    def _ids(self, objects: Sequence[Record]) -> list[int]:
        ids = list(range(self._next, self._next + len(objects)))
        self._next += len(objects)
        return ids

    def create(self, path: str, objects: Sequence[Record]) -> list[int]:
        self.writes.append(("create", path, list(objects)))
        return self._ids(objects)

    def update(self, path: str, objects: Sequence[Record]) -> list[int]:
        self.writes.append(("update", path, list(objects)))
        return [int(o["id"]) for o in objects]


def _record() -> None:  # pragma: no cover - run by hand to refresh the recordings
    import os

    from netfab.cli.pipeline import load_plan
    from netfab.sot.client import Options
    from netfab.sot.desired import desired_state
    from netfab.sot.pull import read_as_built
    from netfab.sot.push import push
    from tests.sot.conftest import INTENTS
    from tests.sot.netbox_server import start

    given = os.environ.get("NETFAB_TEST_NETBOX_URL")
    server = None if given else start()
    url, token = (given, os.environ["NETFAB_TEST_NETBOX_TOKEN"]) if given else (server.url, server.token)  # type: ignore[union-attr]
    try:
        loaded = load_plan([INTENTS / "tiny.yaml"])
        desired = desired_state(loaded.intent, loaded.plan)
        with NetBox(Options(url=url, token=token)) as nb:
            empty = Recorder(nb)
            push(empty, desired, dry_run=True)
            empty.save("tiny-empty")
            push(nb, desired)
            pushed = Recorder(nb)
            push(pushed, desired, dry_run=True)
            read_as_built(pushed, desired.site)
            print(pushed.save("tiny-pushed"))
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    _record()
