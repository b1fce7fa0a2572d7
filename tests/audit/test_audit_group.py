"""Fleet grouping: one finding per (kind, running value, intended value), summarised by role, rail, pod."""

from __future__ import annotations

from netfab.audit.group import group_details, group_drifts, notes_by_text, sentence, summarise
from netfab.audit.model import DeviceAudit, DeviceMeta, Drift

KMAX = "profile[NETFAB-LOSSLESS].queue[3].ecn.kmax_bytes"


def fleet() -> dict[str, DeviceMeta]:
    meta = {f"leaf{n}": DeviceMeta(f"leaf{n}", "leaf", "arista_eos", rail=n % 8, pod=1) for n in range(200)}
    meta |= {f"spine{n}": DeviceMeta(f"spine{n}", "spine", "arista_eos", plane=n % 2, pod=1) for n in range(8)}
    return meta


def drifted(name: str, *drifts: Drift) -> DeviceAudit:
    return DeviceAudit(name, "arista_eos", "drift", drifts=list(drifts))


def test_the_same_drift_on_many_leaves_is_one_sentence() -> None:
    meta = fleet()
    leaves = [n for n, m in meta.items() if m.rail in (2, 5)][:37]
    audits = [drifted(n, Drift(KMAX, 400_000, 1_500_000)) for n in leaves]
    audits.append(drifted("leaf0", Drift(KMAX, 1_000_000, 1_500_000)))  # another value: another group
    groups = group_drifts(audits)
    assert [len(g.devices) for g in groups] == [37, 1]
    assert sentence(groups[0], meta) == (
        "ECN Kmax on queue 3 (qos profile NETFAB-LOSSLESS) is 400 KB on 37 leaves (pod 1, rails 2 and 5); "
        "the intent says 1,500 KB"
    )
    assert sentence(groups[1], meta).endswith("is 1,000 KB on leaf0; the intent says 1,500 KB")


def test_interface_names_are_normalised_and_ports_counted() -> None:
    meta = fleet()
    audits = [
        drifted(f"leaf{n}", *(Drift(f"interface[Ethernet{p}/1].mtu", 1500, 9216) for p in (1, 2))) for n in range(6)
    ]
    [group] = group_drifts(audits)
    assert group.kind == "interface[*].mtu"
    # six rails are no pattern worth naming; one pod is
    assert sentence(group, meta) == "MTU is 1500 on 12 ports of 6 leaves (pod 1); the intent says 9216"


def test_few_devices_are_named_with_their_ports() -> None:
    meta = fleet()
    [group] = group_drifts([drifted("leaf2", Drift("interface[swp1].queue[3].ecn.kmin_bytes", 400_500, 150_000))])
    assert sentence(group, meta) == "ECN Kmin on queue 3 is 400.5 KB on leaf2 (swp1); the intent says 150 KB"


def test_missing_and_unexpected_containers() -> None:
    meta = fleet()
    gone = Drift("bgp.neighbor[swp3]", None, "present", ("remote_as 65000", "peer_group fabric"))
    extra = Drift("bgp.neighbor[10.9.9.9]", "present", None, ("remote_as 64999",))
    audits = [drifted("leaf3", gone), drifted("spine1", extra)]
    by_device = {a.device: a for a in audits}
    sentences = {sentence(g, meta, group_details(g, by_device)) for g in group_drifts(audits)}
    assert sentences == {
        "BGP neighbor is missing on leaf3 (swp3); the intent has it (remote_as 65000, peer_group fabric)",
        "BGP neighbor (remote_as 64999) is configured on spine1 (10.9.9.9) but not in the intent",
    }


def test_summaries_by_role_and_place() -> None:
    meta = fleet()
    assert summarise(["leaf1", "leaf2"], meta) == "leaf1 and leaf2"
    assert summarise([f"spine{n}" for n in range(4)] + ["leaf1", "leaf9"], meta) == (
        "4 spines and 2 leaves (pod 1, rail 1, planes 0 and 1)"
    )


def test_identical_notes_are_listed_once() -> None:
    a = DeviceAudit("a", "frr", "in_sync", notes=["x", "y"])
    b = DeviceAudit("b", "frr", "in_sync", notes=["x"])
    assert notes_by_text([a, b]) == [("x", ["a", "b"]), ("y", ["a"])]
