"""HostPool, the engine's Nornir runner: ThreadedRunner's contract without a Future per host."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from netfab.deploy.runner import HostPool


@dataclass
class FakeHost:
    name: str


@dataclass
class FakeMulti:
    host: FakeHost


@dataclass
class FakeTask:
    """A Nornir Task's runner-facing surface: name, copy(), start(host)."""

    name: str = "prepare"
    fail_on: dict[str, BaseException] = field(default_factory=dict)
    started: list[str] = field(default_factory=list)
    running: int = 0
    most: int = 0
    copies: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def copy(self) -> Any:
        with self.lock:
            self.copies += 1
        return self

    def start(self, host: FakeHost) -> FakeMulti:
        with self.lock:
            self.started.append(host.name)
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(0.002)
        with self.lock:
            self.running -= 1
        if host.name in self.fail_on:
            raise self.fail_on[host.name]
        return FakeMulti(host)


def test_every_host_runs_once_on_its_own_copy_at_most_num_workers_at_a_time() -> None:
    hosts = [FakeHost(f"leaf{i}") for i in range(60)]
    task = FakeTask()
    result = HostPool(num_workers=7).run(task, hosts)  # type: ignore[arg-type]
    assert list(result) == [h.name for h in hosts]  # keyed and ordered by host, as ThreadedRunner's
    assert all(result[h.name].host is h for h in hosts)
    assert sorted(task.started) == sorted(h.name for h in hosts) and task.copies == 60
    assert 1 < task.most <= 7


def test_an_escaping_exception_is_raised_after_every_host_ran_first_host_first() -> None:
    hosts = [FakeHost(f"leaf{i}") for i in range(20)]
    task = FakeTask(fail_on={"leaf12": KeyboardInterrupt("12"), "leaf5": RuntimeError("5")})
    with pytest.raises(RuntimeError, match="5"):
        HostPool(num_workers=4).run(task, hosts)  # type: ignore[arg-type]
    assert sorted(task.started) == sorted(h.name for h in hosts)


def test_no_hosts_no_threads() -> None:
    before = threading.active_count()
    assert dict(HostPool(num_workers=4).run(FakeTask(), [])) == {}  # type: ignore[arg-type]
    assert threading.active_count() == before
