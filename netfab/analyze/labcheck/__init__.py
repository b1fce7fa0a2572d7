"""Validated against the lab: elephant flows through the namespace lab's kernel ECMP, held against the model.

For each kernel hash configuration the intent can render (fib_multipath_hash_policy 0, 1, and 3 with the
5-tuple or the addresses only), on the source leaf of one host pair: set the sysctls, send B batches of N UDP
flows (traffic.py, one source port per flow like a RoCE NIC per QP), read the leaf's uplink tx counters before
and after, and compare the split with three predictions:

- the model (kernel_model.uplink_split_forecast): the busiest uplink's flow count over hash seeds. Where the
  model has no entropy to spread (policy 0, or policy 3 with the addresses only: one hash key) it is
  deterministic and must match exactly; elsewhere the measured busiest count is placed within the forecast
  (mid-rank percentile, inside the [p1, p99] band or not); over the batches, the mean against the model's
  mean and the histogram against the model's (total variation distance, bootstrap p);
- a replica of the kernel's own hash: siphash-2-4 over `struct flow_keys` keyed by fib_multipath_hash_seed,
  then hash-threshold over the route's next hops in kernel order. With the seed set (kernel >= 6.11, nonzero)
  it predicts the exact per-uplink split; the model proper deliberately does not (it is a seed distribution);
- the kernel itself: `ip route get ... iif PORT ipproto udp sport P dport 4791` per flow, so a disagreement
  can be pinned on the traffic (measured != kernel) or on the replica (replica != kernel).

The leaf's hash sysctls are read first and written back at the end whatever happens (policy, fields; the seed
is only read).

Modules: options (what runs), node (lab access), endpoints, runner (the check), kernel_hash (the replica),
stats, model (results), findings, text.
"""

from netfab.analyze.labcheck.endpoints import endpoints
from netfab.analyze.labcheck.findings import lab_findings
from netfab.analyze.labcheck.kernel_hash import jhash_2words, kernel_multipath_hash, select_member, siphash24
from netfab.analyze.labcheck.model import BatchResult, ConfigResult, LabCheck
from netfab.analyze.labcheck.node import Exec, lab_exec
from netfab.analyze.labcheck.options import DEFAULT_CONFIGS, Endpoint, HashConfig, LabCheckError, LabCheckOptions
from netfab.analyze.labcheck.runner import run_lab_check
from netfab.analyze.labcheck.text import render_lab_text

__all__ = [
    "DEFAULT_CONFIGS",
    "BatchResult",
    "ConfigResult",
    "Endpoint",
    "Exec",
    "HashConfig",
    "LabCheck",
    "LabCheckError",
    "LabCheckOptions",
    "endpoints",
    "jhash_2words",
    "kernel_multipath_hash",
    "lab_exec",
    "lab_findings",
    "render_lab_text",
    "run_lab_check",
    "select_member",
    "siphash24",
]
