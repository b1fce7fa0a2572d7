"""The check's verdicts as findings (ANALYZE003-005) on the intent's load_balancing section, and its notes."""

from __future__ import annotations

from netfab.analyze.labcheck.model import LabCheck
from netfab.analyze.labcheck.options import DETERMINISTIC_MIN_SHARE
from netfab.core.findings import Finding, Location, Severity


def lab_findings(check: LabCheck, source_file: str) -> list[Finding]:
    findings = []
    for c in check.configs:
        s = c.summary()
        if not c.agrees:
            if c.deterministic:
                msg = (
                    f"lab {check.prefix}: {c.config.label} spread flows the model says cannot be told apart: "
                    f"busiest uplink {s['measured_busiest_share']['min']:.0%} of the bytes at least, expected "
                    f">= {DETERMINISTIC_MIN_SHARE:.0%}"
                )
            else:
                msg = (
                    f"lab {check.prefix}: {c.config.label}: {s['batches'] - s['batches_in_band']} of {s['batches']} "
                    f"batches outside the model's [p1, p99] band (p = {s['p_value']:.3g} by chance)"
                )
            findings.append(
                Finding(
                    "ANALYZE003",
                    Severity.ERROR,
                    msg,
                    Location(source_file),
                    hint="check that the leaf runs the policy the check set, and that nothing else sends over "
                    "its uplinks; then the kernel model is wrong",
                    path="load_balancing.hash_fields",
                )
            )
        if s["replica_batches"] and s["replica_exact_batches"] != s["replica_batches"]:
            findings.append(
                Finding(
                    "ANALYZE004",
                    Severity.WARNING,
                    f"lab {check.prefix}: {c.config.label}: the kernel-hash replica predicted the measured split "
                    f"in {s['replica_exact_batches']} of {s['replica_batches']} batches "
                    f"({s['replica_vs_kernel_flows']}/{s['kernel_flows_checked']} flows as `ip route get`)",
                    Location(source_file),
                    hint="replica != ip route get: this kernel hashes differently; ip route get != measured: "
                    "the traffic did not go where the kernel routes it (skb hash from the sender?)",
                    path="load_balancing.hash_fields",
                )
            )
    if not check.restored:
        findings.append(
            Finding(
                "ANALYZE005",
                Severity.ERROR,
                f"lab {check.prefix}: {check.src.leaf}'s hash sysctls were not restored: before "
                f"{check.sysctls_before}, now {check.sysctls_after or 'unreadable'}",
                Location(source_file),
                hint=f"re-run the leaf's rendered script, or netfab lab down/up --lab {check.prefix}",
            )
        )
    return findings


def seed_notes(seed: int | None, planned: int, leaf: str) -> list[str]:
    """Notes on the leaf's hash seed: without a set seed only distributions compare."""
    if seed is None:
        return [
            f"{leaf}: this kernel has no fib_multipath_hash_seed (< 6.11): its hash key is random per boot, so only "
            "the distribution can be compared; the kernel-hash replica is off"
        ]
    if seed == 0:
        return [
            f"{leaf}: fib_multipath_hash_seed is 0 (a random key): only the distribution can be compared; "
            "the kernel-hash replica is off"
        ]
    if seed != planned:
        return [f"{leaf}: runs hash seed {seed}, the plan says {planned} (the leaf's script did not set it)"]
    return []
