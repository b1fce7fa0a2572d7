"""The lab check's pure parts, anywhere: the kernel-hash replica against answers a 6.18 kernel gave (more in
test_kernel_hash), and the whole check against a simulated lab (a leaf that hashes like the replica, or one
that ignores policy 0)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import pytest
from labcheck_helpers import lab_plan

from netfab.analyze import KernelFlow
from netfab.analyze.labcheck import (
    HashConfig,
    LabCheckError,
    LabCheckOptions,
    endpoints,
    kernel_multipath_hash,
    lab_findings,
    render_lab_text,
    run_lab_check,
    select_member,
)
from netfab.analyze.labcheck.stats import flows_from_bytes
from netfab.analyze.traffic import ETH_IP_UDP_OVERHEAD, SENDER_SOURCE

SEED = 1031014252  # leaf1's planned hash seed in intent/lab.yaml
PORTS = [50734, 51052, 51525, 52236, 54095, 59763, 61134, 62089]
# `ip route get 10.64.0.5 from 10.64.0.1 iif swp1 ipproto udp sport P dport 4791` on leaf1 of the lab, kernel
# 6.18, seed above: the next-hop index (kernel order) per port above, per (policy, fib_multipath_hash_fields).
KERNEL_ANSWERS = {
    (0, 0x0037): "11111111",
    (1, 0x0037): "10011101",
    (3, 0x0037): "01010100",
    (3, 0x0003): "00000000",
    (3, 0x0013): "11000001",
}


@pytest.mark.parametrize(("policy", "mask"), sorted(KERNEL_ANSWERS))
def test_replica_names_the_next_hop_the_kernel_named(policy: int, mask: int) -> None:
    got = "".join(
        str(select_member(kernel_multipath_hash(SEED, policy, mask, KernelFlow("10.64.0.1", "10.64.0.5", p)), [1, 1]))
        for p in PORTS
    )
    assert got == KERNEL_ANSWERS[(policy, mask)]


def test_hash_threshold_bounds() -> None:
    assert [select_member(h, [1, 1]) for h in (0, (1 << 30) - 1, 1 << 30, (1 << 31) - 1)] == [0, 0, 1, 1]
    # Upper bound of the first of weights 1:2 is round(2**31 / 3) - 1 = 715827882 (DIV_ROUND_CLOSEST, not floor).
    assert [select_member(h, [1, 2]) for h in (715827882, 715827883, (1 << 31) - 1)] == [0, 1, 1]


def test_flows_from_bytes_add_up() -> None:
    assert flows_from_bytes({"swp3": 700, "swp4": 900}, 16) == {"swp3": 7, "swp4": 9}
    assert flows_from_bytes({"swp3": 1000, "swp4": 0}, 16) == {"swp3": 16, "swp4": 0}
    assert sum(flows_from_bytes({"a": 333, "b": 333, "c": 334}, 10).values()) == 10


def test_default_endpoints_cross_a_leaf_on_the_same_rail() -> None:
    src, dst = endpoints(lab_plan())
    assert (src.host, src.nic, src.leaf, src.leaf_port) == ("host1", "eth0", "leaf1", "swp1")
    assert (dst.host, dst.nic, dst.leaf) == ("host3", "eth0", "leaf3")
    with pytest.raises(LabCheckError, match="share leaf1"):
        endpoints(lab_plan(), "host1:eth0", "host2:eth0")


# --- a simulated lab ---------------------------------------------------------------------------------------


@dataclass
class FakeLab:
    """leaf1 with two uplinks (kernel order swp4, swp3) hashing like the replica; host1 runs the sender."""

    ignore_policy_0: bool = False
    sysctls: dict[str, str] = field(
        default_factory=lambda: {
            "fib_multipath_hash_policy": "1",
            "fib_multipath_hash_fields": "55",
            "fib_multipath_hash_seed": str(SEED),
        }
    )
    tx: dict[str, list[int]] = field(default_factory=lambda: {"swp3": [0, 0], "swp4": [0, 0]})
    order: tuple[str, str] = ("swp4", "swp3")

    def uplink(self, sport: int) -> str:
        policy = int(self.sysctls["fib_multipath_hash_policy"])
        if policy == 0 and self.ignore_policy_0:
            policy = 1
        mask = int(self.sysctls["fib_multipath_hash_fields"], 0)
        h = kernel_multipath_hash(SEED, policy, mask, KernelFlow("10.64.0.1", "10.64.0.5", sport))
        return self.order[select_member(h, [1, 1])]

    def __call__(self, node: str, argv: list[str], stdin: str | None, timeout: float) -> tuple[int, str, str]:
        if argv[:2] == ["sh", "-c"] and "printf" in argv[2]:
            value, path = argv[4], argv[5]
            self.sysctls[path.rsplit("/", 1)[1]] = value
            return 0, "", ""
        if argv[:2] == ["sh", "-c"]:
            return 0, "\n".join(self.sysctls.get(p.rsplit("/", 1)[1], "-") for p in argv[4:]) + "\n", ""
        if argv[0] == "cat":
            values = [self.tx[p.split("/")[4]][0 if p.endswith("bytes") else 1] for p in argv[1:]]
            return 0, "\n".join(map(str, values)) + "\n", ""
        if argv[:3] == ["ip", "-j", "-4"]:
            return 0, json.dumps([{"addr_info": [{"local": "10.64.0.1"}]}]), ""
        if argv[:3] == ["ip", "-j", "route"]:
            return 0, json.dumps([{"dst": "10.64.0.4/31", "nexthops": [{"dev": d} for d in self.order]}]), ""
        if argv[:2] == ["ip", "-o"]:
            ports = [int(m) for m in re.findall(r"sport (\d+)", stdin or "")]
            return 0, "".join(f"10.64.0.5 via x dev {self.uplink(p)} \\ cache\n" for p in ports), ""
        if argv[1:3] == ["-c", SENDER_SOURCE]:
            cfg = json.loads(argv[3])
            for p in cfg["sports"]:
                link = self.tx[self.uplink(p)]
                link[0] += cfg["packets"] * (cfg["payload"] + ETH_IP_UDP_OVERHEAD)
                link[1] += cfg["packets"]
            return 0, json.dumps({"sent": [cfg["packets"]] * len(cfg["sports"]), "errors": 0, "elapsed": 0.1}), ""
        raise AssertionError(f"unexpected command on {node}: {argv[:4]}")


def test_simulated_lab_agrees_and_is_restored() -> None:
    fake = FakeLab()
    fake.sysctls["fib_multipath_hash_fields"] = "7"  # as found, whatever it is, is what comes back
    check = run_lab_check(lab_plan(), "sim", LabCheckOptions(batches=4), intent_config=HashConfig(1, 0x37), run=fake)
    assert [c.agrees for c in check.configs] == [True] * 4
    assert [c.deterministic for c in check.configs] == [True, False, False, True]
    assert all(b.exact for c in check.configs for b in c.batches)
    assert check.restored and fake.sysctls["fib_multipath_hash_policy"] == "1"
    assert fake.sysctls["fib_multipath_hash_fields"] == "7"
    assert lab_findings(check, "lab.yaml") == []
    doc = json.loads(json.dumps(check.as_dict()))  # JSON-able as is
    text = render_lab_text(doc)
    assert "policy 1 (L4 5-tuple) *" in text and "lab and model agree" in text
    assert doc["summary"]["replica_exact_batches"] == doc["summary"]["replica_batches"] == 16


def test_a_leaf_that_spreads_under_policy_0_disagrees() -> None:
    check = run_lab_check(lab_plan(), "sim", LabCheckOptions(batches=2), run=FakeLab(ignore_policy_0=True))
    policy0 = check.configs[0]
    assert policy0.deterministic and not policy0.agrees
    rules = [(f.rule_id, f.severity.value) for f in lab_findings(check, "lab.yaml")]
    assert ("ANALYZE003", "error") in rules
    assert ("ANALYZE004", "warning") in rules  # the replica (which follows the sysctl) no longer matches
    assert "LAB AND MODEL DISAGREE" in render_lab_text(check.as_dict())


def test_options_are_checked_before_touching_the_lab() -> None:
    with pytest.raises(LabCheckError, match="flows 0"):
        run_lab_check(lab_plan(), "sim", LabCheckOptions(flows=0), run=FakeLab())
