"""The kernel multipath-hash replica against vectors it did not produce: the SipHash authors' reference set,
and next hops a real Linux kernel chose (recorded in vectors/, and asked live where this machine can)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from kernel_vectors import CASES, PROTOCOLS, VECTORS, Flow, live_kernel_problem, namespace, random_flows

from netfab.analyze import KernelFlow
from netfab.analyze.labcheck import jhash_2words, kernel_multipath_hash, select_member, siphash24

SIPHASH_VECTORS = Path(__file__).parent / "vectors" / "siphash24_reference.txt"


def _siphash_vectors() -> list[bytes]:
    lines = SIPHASH_VECTORS.read_text().splitlines()
    return [bytes.fromhex(ln) for ln in lines if ln and not ln.startswith("#")]


def test_siphash24_matches_all_64_reference_vectors() -> None:
    key = bytes(range(16))
    k0, k1 = int.from_bytes(key[:8], "little"), int.from_bytes(key[8:], "little")
    expected = _siphash_vectors()
    assert len(expected) == 64
    # Lengths 0-63 cover every tail length (0-7 bytes) with 0-7 full blocks before it.
    got = [siphash24(k0, k1, bytes(range(n))).to_bytes(8, "little") for n in range(64)]
    assert [n for n in range(64) if got[n] != expected[n]] == []


def test_jhash_2words_is_a_mix_not_an_identity() -> None:
    # The replica's policy-3 step; its correctness is pinned by the kernel vectors below (policy 3 cases).
    assert len({jhash_2words(a, 0, 0) for a in range(256)}) == 256
    assert jhash_2words(0, 0, 0) != jhash_2words(0, 0, 1)


def _member(seed: int, policy: int, fields: int, weights: list[int], f: Flow) -> int:
    flow = KernelFlow(f.src, f.dst, src_port=f.sport, dst_port=f.dport, protocol=PROTOCOLS[f.protocol])
    return select_member(kernel_multipath_hash(seed, policy, fields, flow), weights)


def _recorded_cases() -> list[dict]:
    return json.loads(VECTORS.read_text())["cases"]


def test_recorded_vectors_cover_every_policy_and_uneven_weights() -> None:
    cases = _recorded_cases()
    assert {c["policy"] for c in cases} == {0, 1, 2, 3}
    assert any(len(set(c["weights"])) > 1 for c in cases)
    assert all(len(c["flows"]) >= 16 for c in cases)
    # A case whose hash sees addresses or ports must reach more than one next hop, or it pins little about the
    # hash (protocol-only and inner-only masks have at most two keys on these flows and may not spread).
    varied = [c for c in cases if c["policy"] != 3 or int(c["fields"], 16) & 0x0033]
    assert [c for c in varied if len({f[-1] for f in c["flows"]}) < 2] == []


@pytest.mark.parametrize("case", _recorded_cases(), ids=lambda c: f"seed{c['seed']}-p{c['policy']}-{c['fields']}")
def test_replica_picks_the_next_hop_the_kernel_picked(case: dict) -> None:
    fields = int(case["fields"], 16)
    wrong = []
    for src, dst, proto, sport, dport, member in case["flows"]:
        got = _member(case["seed"], case["policy"], fields, case["weights"], Flow(src, dst, proto, sport, dport))
        if got != member:
            wrong.append((src, dst, proto, sport, dport, member, got))
    assert wrong == []


def test_replica_against_the_live_kernel_with_fresh_flows() -> None:
    if problem := live_kernel_problem():
        pytest.skip(f"live kernel vectors: {problem}")
    rng = random.Random()  # fresh flows every run: the recorded file cannot have been fitted to them
    with namespace(max(len(c[3]) for c in CASES)) as ns:
        for seed, policy, fields, weights in CASES:
            flows = random_flows(rng, 32)
            kernel = ns.next_hops(seed, policy, fields, weights, flows)
            replica = [_member(seed, policy, fields, list(weights), f) for f in flows]
            assert replica == kernel, (seed, policy, hex(fields), weights, flows)
