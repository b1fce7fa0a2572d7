"""NCCL acceptance: nccl-tests logs parsed and judged against the bus bandwidth the design allows.

The logs under nccl_logs/ are written in nccl-tests' stdout format (header, rank list, result table, optional
mpirun prefixes and NCCL INFO lines) with figures chosen for each case; each says so in its first line. They
are not recordings of a netfab-built fabric (none exists here).
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from netfab.analyze.capacity import Capacity, analyze_capacity
from netfab.analyze.nccl import NcclLogError, NcclRun, expect, judge, parse_nccl_tests, read_log
from netfab.analyze.routing import FabricRoutes, build_routes
from netfab.cli.pipeline import load_plan
from netfab.core.findings import Status

ROOT = Path(__file__).resolve().parents[2]
LOGS = Path(__file__).parent / "nccl_logs"


@cache
def fabric(intent: str) -> tuple[FabricRoutes, Capacity]:
    loaded = load_plan([ROOT / "intent" / intent], strict=False)
    plan = loaded.plan
    return build_routes(plan, loaded.intent.topology.servers.gpus_per_server), analyze_capacity(loaded.intent, plan)


def test_parses_a_plain_log() -> None:
    run = read_log(LOGS / "allreduce-2x8-healthy.log")
    assert run.collective == "all_reduce"
    assert run.ranks == 16 and run.hosts == ("su1-srv1", "su1-srv2") and run.ranks_per_host == 8
    assert [r.size_bytes for r in run.rows][:3] == [8, 32, 128]
    last = run.rows[-1]
    assert last.size_bytes == 8589934592 and last.out_of_place.busbw_gbs == pytest.approx(371.61)
    assert last.in_place is not None and last.in_place.busbw_gbs == pytest.approx(367.93)
    assert last.best_busbw == pytest.approx(371.61) and last.wrong == 0


def test_parses_mpirun_prefixes_info_lines_and_unchecked_results() -> None:
    run = read_log(LOGS / "alltoall-4x8-mpirun.log")
    # The binary is named only on the command line; NCCL INFO lines sit inside the rank list.
    assert run.collective == "alltoall"
    assert run.ranks == 32 and len(run.hosts) == 4
    assert all(r.out_of_place.wrong is None for r in run.rows)


OLD_LAYOUT = """\
# nThread 1 nGpus 1 minBytes 1310720000 maxBytes 1310720000 step: 1048576(bytes) warmup iters: 5 iters: 20 validation: 1
#
# Using devices
#   Rank  0 Pid   1320 on host-a device  0 [0x00] Tesla V100-SXM2-16GB
#   Rank  1 Pid   2066 on host-b device  0 [0x00] Tesla V100-SXM2-16GB
#
#                                                       out-of-place                       in-place
#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)                       (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
  1310720000     327680000     float     sum   1131000    1.16    1.16  0e+00   1129000    1.16    1.16  0e+00
"""


def test_parses_the_layout_before_nccl_tests_had_a_root_column() -> None:
    """nccl-tests without the root column, and "error" printed as a float (the layout of the all_reduce_perf
    output quoted in NVIDIA/nccl-tests#107, 2022; figures here are this test's own)."""
    run = parse_nccl_tests("# all_reduce_perf\n" + OLD_LAYOUT, "old.log")
    [row] = run.rows
    assert row.size_bytes == 1310720000 and row.out_of_place.time_us == pytest.approx(1131000)
    assert row.out_of_place.busbw_gbs == pytest.approx(1.16) and row.in_place is not None
    # The old "error" column is a float deviation, not a count of wrong elements: nothing counted.
    assert row.out_of_place.wrong is None and run.hosts == ("host-a", "host-b")


# The layout of nccl-tests 2.18 as public outputs show it: "unalign" in the parameter line, #wrong one column
# wider, device ids as PCI domain:bus:device, a trailer naming the collective again. Figures are this test's own.
LAYOUT_2_18 = """\
# nccl-tests version 2.18.2 nccl-headers=23007 nccl-library=23007
# Collective test starting: all_gather_perf
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 \
validation: 1 graph: 0 unalign: 0
#
# Using devices
#  Rank  0 Group  0 Pid  11111 on  node-a device  0 [0009:01:00] NVIDIA GH200 120GB
#  Rank  1 Group  0 Pid  22222 on  node-b device  0 [0009:01:00] NVIDIA GH200 120GB
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
     1048576        131072     float    none      -1   300.00    3.50    1.75       0   301.00    3.48    1.74       0
     2097152        262144     float    none      -1   350.00    5.99    3.00       0   351.00    5.97    2.99       0
     4194304        524288     float    none      -1   450.00    9.32    4.66       0   452.00    9.28    4.64       0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 3.13
#
# Collective test concluded: all_gather_perf
#
"""


def test_parses_the_2_18_layout() -> None:
    run = parse_nccl_tests(LAYOUT_2_18, "ag.log")
    assert run.collective == "all_gather" and run.hosts == ("node-a", "node-b")
    assert [r.size_bytes for r in run.rows] == [1048576, 2097152, 4194304]
    assert run.rows[-1].best_busbw == pytest.approx(4.66) and run.rows[-1].wrong == 0


def test_two_runs_appended_to_one_file_are_refused_at_the_second() -> None:
    """A sweep script that appends every collective to one file: judging all_reduce's rows as all_gather
    would pass or fail the wrong thing, so the second run's first line is named."""
    second = LAYOUT_2_18.replace("all_gather_perf", "all_reduce_perf")
    with pytest.raises(NcclLogError, match=r"ag\.log:21: a second run \(all_reduce_perf\) starts here"):
        parse_nccl_tests(LAYOUT_2_18 + second, "ag.log")


def test_a_log_that_does_not_name_its_collective_is_refused_not_guessed() -> None:
    with pytest.raises(NcclLogError, match="does not say which collective"):
        read_log(LOGS / "unnamed-2x8.log")
    assert read_log(LOGS / "unnamed-2x8.log", "all_gather").collective == "all_gather"
    with pytest.raises(NcclLogError, match="is a all_reduce run, not alltoall"):
        read_log(LOGS / "allreduce-2x8-healthy.log", "alltoall")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hello\n", "no result rows"),
        ("# all_reduce_perf\n#  Rank  0 Group  0 Pid 1 on h device 0 [0x1] GPU\n", "no result rows"),
        ("# all_reduce_perf\n     1024   256  float sum -1  1.0  1.0  1.0  0\n", "no '#  Rank N"),
        (
            "# all_reduce_perf\n#  Rank  0 Group  0 Pid 1 on h device 0 [0x1] GPU\n"
            "     1024   256  float sum -1  fast  1.0  1.0  0\n",
            r"x\.log:3: unreadable result row",
        ),
    ],
)
def test_unreadable_logs_say_where(text: str, message: str) -> None:
    with pytest.raises(NcclLogError, match=message):
        parse_nccl_tests(text, "x.log")


def test_all_reduce_expectation_is_the_servers_nics() -> None:
    routes, capacity = fabric("rail-4su.yaml")
    exp = expect(read_log(LOGS / "allreduce-2x8-healthy.log"), routes, capacity)
    # 8 x 400G NICs per server: 8 x 50 GB/s carry the ring's node boundaries.
    assert exp.busbw_gbs == pytest.approx(8 * 400 / 8) and exp.bottleneck == "nic" and exp.scope_known


def test_healthy_run_passes_large_sizes_and_skips_latency_bound_ones() -> None:
    routes, capacity = fabric("rail-4su.yaml")
    run = read_log(LOGS / "allreduce-2x8-healthy.log")
    result = judge(run, expect(run, routes, capacity))
    statuses = {v.row.size_bytes: v.status for v in result.sizes}
    assert statuses[8] is Status.SKIP and statuses[8589934592] is Status.PASS
    assert Status.FAIL not in statuses.values()
    assert not [f for f in result.findings() if f.is_problem]


def test_slow_run_fails_with_the_size_line_and_the_bottleneck() -> None:
    routes, capacity = fabric("rail-4su.yaml")
    run = read_log(LOGS / "allreduce-2x8-slow.log")
    failed = [f for f in judge(run, expect(run, routes, capacity)).findings() if f.is_problem]
    assert failed and {f.rule_id for f in failed} == {"NCCL001"}
    biggest = failed[-1]
    assert biggest.location.line == run.rows[-1].line
    assert "45% of the 400.0 GB/s" in biggest.message and "bottleneck nic" in biggest.message
    # The same log passes when the acceptance threshold is set below what it measured.
    assert not [f for f in judge(run, expect(run, routes, capacity), 0.4).findings() if f.is_problem]


def test_wrong_results_are_an_error_whatever_the_bandwidth() -> None:
    routes, capacity = fabric("rail-4su.yaml")
    run = read_log(LOGS / "allgather-2x8-wrong.log")
    wrong = [f for f in judge(run, expect(run, routes, capacity)).findings() if f.rule_id == "NCCL002"]
    assert len(wrong) == 1 and "128 MiB: 6 wrong" in wrong[0].message


def test_alltoall_inside_a_non_blocking_su_is_bound_by_the_nic() -> None:
    routes, capacity = fabric("rail-4su.yaml")
    run = read_log(LOGS / "alltoall-4x8-mpirun.log")
    exp = expect(run, routes, capacity)
    n, g = 32, 8
    assert exp.bottleneck == "nic" and exp.busbw_gbs == pytest.approx(50 * (n - 1) / (n - g))
    assert [v.status for v in judge(run, exp).sizes][-1] is Status.PASS


def _synthetic_run(hosts: list[str], per_host: int, collective: str = "alltoall") -> NcclRun:
    ranks = "\n".join(
        f"#  Rank {i * per_host + d} Group  0 Pid 1 on {h} device {d} [0x1] GPU"
        for i, h in enumerate(hosts)
        for d in range(per_host)
    )
    row = "  8589934592  2147483648  float  none  -1  1.0  1.0  10.0  0  1.0  1.0  10.0  0"
    return parse_nccl_tests(f"# {collective}_perf\n{ranks}\n{row}\n", "synthetic.log")


def test_alltoall_over_two_whole_pods_is_bound_by_the_oversubscribed_spines() -> None:
    routes, capacity = fabric("clos3-24k.yaml")
    pods = routes.leaf_pod[routes.nic_leaf[:, 0]]
    hosts = [routes.server_names[i] for i in np.flatnonzero(pods < 2)]
    exp = expect(_synthetic_run(hosts, 8), routes, capacity)
    assert exp.bottleneck == "spine_uplinks" and exp.scope_known
    # The figure from the plan itself: half the job's NIC traffic leaves each pod over its spines' uplinks.
    per_pod = len(hosts) // 2
    spine = capacity.tiers["spine"]
    leaving = per_pod * 8 * routes.nic_gbps * (len(hosts) - per_pod) / (len(hosts) - 1)
    over = leaving / (spine.up_gbps * spine.switches / routes.pods)
    n = len(hosts) * 8
    assert over > 1
    assert exp.busbw_gbs == pytest.approx(routes.nic_gbps / 8 * (n - 1) / (n - 8) / over)
    # The same job's ring all-reduce is not bound by the spines (rings cross them on a few edges).
    assert expect(_synthetic_run(hosts, 8, "all_reduce"), routes, capacity).bottleneck == "nic"


def test_hosts_outside_the_plan_are_said_and_judged_as_the_smallest_scope() -> None:
    routes, capacity = fabric("rail-4su.yaml")
    run = _synthetic_run(["gpu-a", "gpu-b"], 8)
    exp = expect(run, routes, capacity)
    assert not exp.scope_known
    found = judge(run, exp).findings()
    assert [f.rule_id for f in found if f.rule_id == "NCCL003"] == ["NCCL003"]


def _netfab(*args: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "netfab.cli.app", *args], capture_output=True, text=True, env=env, cwd=ROOT
    )


def test_cli_fails_a_slow_log_passes_a_healthy_one_and_refuses_garbage(tmp_path: Path) -> None:
    base = ["analyze", "intent/rail-4su.yaml", "--trials", "10", "--out", str(tmp_path / "a")]
    slow = _netfab(*base, "--nccl-tests", str(LOGS / "allreduce-2x8-slow.log"), "-f", "json")
    assert slow.returncode == 1, slow.stderr
    report = json.loads(slow.stdout)
    assert {f["rule_id"] for f in report["findings"] if f["status"] == "fail"} == {"NCCL001"}
    written = json.loads((tmp_path / "a" / "nccl-acceptance.json").read_text())
    assert written[0]["expectation"]["expected_busbw_gbs"] == 400.0

    healthy = _netfab(*base, "--nccl-tests", str(LOGS / "allreduce-2x8-healthy.log"))
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr

    junk = tmp_path / "junk.log"
    junk.write_text("not a log\n")
    bad = _netfab(*base, "--nccl-tests", str(junk))
    assert bad.returncode == 2 and "no result rows" in bad.stderr and "Traceback" not in bad.stderr
