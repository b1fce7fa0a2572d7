"""A Nornir runner for waves of thousands of hosts: `num_workers` threads, each taking the next host until none
is left.

Nornir's ThreadedRunner submits every host to a ThreadPoolExecutor before the first finishes: per host a
Future (with its Condition and RLock), a work item and a queue hand-off, all built up front on the engine's
thread while the device threads run. At 10,000 hosts that is 10,000 of each alive for the whole stage, which
every full pass of the cyclic collector scans again with the GIL held (one stage of six in a wave).
HostPool keeps only the tasks in flight: each worker pulls the next host from one shared iterator.

Same contract as ThreadedRunner: every host gets `task.copy().start(host)` (Nornir's processors run inside
start, in the worker), hosts are started in list order, at most `num_workers` at a time, the results come
back keyed and ordered by host, and an exception that escapes Task.start (it catches Exception itself) is
raised in the caller after every other host has finished, the first host's in list order, as
future.result() would.
"""

from __future__ import annotations

import threading

from nornir.core.inventory import Host
from nornir.core.task import AggregatedResult, MultiResult, Task


class HostPool:
    def __init__(self, num_workers: int = 20) -> None:
        self.num_workers = num_workers

    def run(self, task: Task, hosts: list[Host]) -> AggregatedResult:
        done: list[MultiResult | None] = [None] * len(hosts)
        raised: list[BaseException | None] = [None] * len(hosts)
        todo = iter(range(len(hosts)))
        take = threading.Lock()

        def work() -> None:
            while True:
                with take:
                    i = next(todo, None)
                if i is None:
                    return
                try:
                    done[i] = task.copy().start(hosts[i])
                except BaseException as exc:  # ThreadPoolExecutor keeps these for future.result(): so do we
                    raised[i] = exc

        workers = [
            threading.Thread(target=work, name=f"netfab-{task.name}-{n}")
            for n in range(min(self.num_workers, len(hosts)))
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        result = AggregatedResult(task.name)
        for i, multi in enumerate(done):
            if raised[i] is not None:
                raise raised[i]  # type: ignore[misc]
            assert multi is not None
            result[multi.host.name] = multi
        return result
