"""Post-checks derived from the plan, run against one open NAPALM connection per device.

Each check is a small class (ANTA style): an id, a title, a docstring that `netfab rules` shows, and
`run(device, conn, plan)` returning results (netfab Findings with a status). A check that needs a getter
the platform's driver lacks says 'skip' with the reason; it never passes silently. Ids share audit's
scheme, VERIFY-<AREA>, so `netfab rules VERIFY-BGP` names the verb that reports it.
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

from netfab.capabilities import capabilities_for
from netfab.core.findings import Finding, RuleInfo, Severity, Status
from netfab.deploy.drivers.protocol import ReadsQosState, ReadsRouteEcmpWidth
from netfab.design.plan import DevicePlan, FabricPlan, sessions_of
from netfab.verify.results import check_result

CheckResult = Finding  # what a check returns: the one result type of every verb


class Check:
    id: ClassVar[str]
    title: ClassVar[str]
    hint: ClassVar[str] = ""

    def run(self, dev: DevicePlan, conn: Any, plan: FabricPlan) -> list[CheckResult]:
        raise NotImplementedError

    def result(
        self, dev: DevicePlan, status: Status | str, message: str, expected: Any = None, actual: Any = None
    ) -> CheckResult:
        return check_result(dev.name, self.id, status, message, expected, actual)

    @classmethod
    def rule_info(cls) -> RuleInfo:
        return RuleInfo(cls.id, cls.title, Severity.ERROR, inspect.cleandoc(cls.__doc__ or cls.title), hint=cls.hint)


def _peer_key(neighbor_interface: str, address: str | None) -> str:
    return address or neighbor_interface


class BgpSessions(Check):
    """BGP sessions to exactly the intended peers are Established.

    For every BGP neighbor in the device's plan, the session exists, is Established and the peer answers
    with the planned AS; a peer the plan does not have fails too (a miscabled or leftover session).
    """

    hint = "compare `show bgp summary` with the cabling plan; a wrong AS usually means a miscabled port"

    id = "VERIFY-BGP"
    title = "BGP sessions to exactly the intended peers are Established"

    def run(self, dev: DevicePlan, conn: Any, plan: FabricPlan) -> list[CheckResult]:
        bgp = sessions_of(dev)
        assert bgp is not None
        peers = (conn.get_bgp_neighbors().get("global") or {}).get("peers", {})
        expected = {_peer_key(n.interface, n.address): n for n in bgp.neighbors}
        out = []
        for key, n in sorted(expected.items()):
            actual = peers.get(key)
            where = f"{n.peer_device} on {n.interface}"
            if actual is None:
                out.append(self.result(dev, "fail", f"no BGP session to {where}", "Established", "absent"))
            elif not actual.get("is_up"):
                out.append(self.result(dev, "fail", f"BGP session to {where} is down", "Established", "down"))
            elif int(actual.get("remote_as", n.remote_as)) != n.remote_as:
                out.append(
                    self.result(
                        dev, "fail", f"{where} answers as AS {actual['remote_as']}", n.remote_as, actual["remote_as"]
                    )
                )
            else:
                out.append(self.result(dev, "pass", f"BGP to {where} Established"))
        for key in sorted(set(peers) - set(expected)):
            out.append(self.result(dev, "fail", f"unexpected BGP peer {key}", None, key))
        return out


class InterfacesUp(Check):
    """Every planned interface is up with the intended MTU.

    A fabric port that is down or carries a smaller MTU than the plan (9216 on links) drops RoCE frames
    or fragments the underlay; both fail.
    """

    hint = "check the optic and cable of a down port; re-deploy to fix an MTU"

    id = "VERIFY-INTERFACES"
    title = "interfaces are up with the intended MTU"

    def run(self, dev: DevicePlan, conn: Any, plan: FabricPlan) -> list[CheckResult]:
        interfaces = conn.get_interfaces()
        # The MTU the platform was configured with: the plan's in the platform's own counting (Junos adds the L2
        # header), capped at the CLI's maximum (EOS 9214).
        caps = capabilities_for(dev.platform, dev.os_version)
        out = []
        for i in dev.interfaces:
            mtu = caps.interface_mtu(i.mtu)
            got = interfaces.get(i.name)
            if got is None:
                out.append(
                    self.result(dev, "fail", f"{i.name} (to {i.peer_device}) does not exist", "present", "absent")
                )
            elif not got.get("is_up"):
                out.append(self.result(dev, "fail", f"{i.name} (to {i.peer_device}) is down", "up", "down"))
            elif int(got.get("mtu", 0)) != mtu:
                out.append(
                    self.result(dev, "fail", f"{i.name} MTU is {got.get('mtu')}, intended {mtu}", mtu, got.get("mtu"))
                )
            else:
                out.append(self.result(dev, "pass", f"{i.name} up, MTU {mtu}"))
        return out


class EcmpWidth(Check):
    """Routes to every remote leaf's loopback use as many next hops as the leaf has uplinks.

    Fewer next hops than uplinks means ECMP is not spreading over the whole fabric (a session down, or
    maximum-paths too small): the remaining links carry more flows and the collective's tail grows. Skipped
    where the platform's driver cannot show per-route next hops.
    """

    hint = "check BGP multipath (maximum-paths) and the sessions on every uplink"

    id = "VERIFY-ECMP"
    title = "ECMP width to remote leaves is as designed"

    def run(self, dev: DevicePlan, conn: Any, plan: FabricPlan) -> list[CheckResult]:
        if dev.role != "leaf":
            return []
        if not isinstance(conn, ReadsRouteEcmpWidth):
            return [self.result(dev, "skip", "the platform's driver cannot show per-route next hops")]
        uplinks = len(dev.interfaces_by_role("fabric_up"))
        remote = [f"{d.loopback}/32" for d in plan.devices.values() if d.role == "leaf" and d.name != dev.name]
        widths = conn.get_route_ecmp_width(remote)
        out = []
        for prefix in remote:
            width = widths.get(prefix, 0)
            if width != uplinks:
                out.append(self.result(dev, "fail", f"{prefix}: {width} next hops, designed {uplinks}", uplinks, width))
        if not out:
            out.append(self.result(dev, "pass", f"{len(remote)} remote leaves reached over {uplinks} paths"))
        return out


class Cabling(Check):
    """Interface peers match the cabling plan (from LLDP, or the BGP peer seen on each fabric port).

    On fabric ports the BGP router id behind each port must be the planned peer device; on host ports the
    server NIC seen in ARP must be the one the plan puts there (rail order matters to the collective).
    """

    hint = "swap the cables to match cabling.csv, or fix the plan if the cabling is intended"

    id = "VERIFY-CABLING"
    title = "neighbors match the cabling plan"

    def run(self, dev: DevicePlan, conn: Any, plan: FabricPlan) -> list[CheckResult]:
        peers = (conn.get_bgp_neighbors().get("global") or {}).get("peers", {})
        by_router_id = {d.loopback: d.name for d in plan.devices.values()}
        out = []
        for i in dev.interfaces:
            if i.bgp_peer_asn is None:
                continue
            seen = peers.get(i.peer_address or i.name, {})
            rid = seen.get("remote_id")
            if not rid or rid == "0.0.0.0":
                continue  # no session: VERIFY-BGP reports it
            actual = by_router_id.get(rid, rid)
            if actual != i.peer_device:
                out.append(
                    self.result(
                        dev,
                        "fail",
                        f"{i.name} reaches {actual}; the cabling plan says {i.peer_device} {i.peer_port}",
                        i.peer_device,
                        actual,
                    )
                )
        out.extend(self._host_ports(dev, conn, plan))
        if not out:
            out.append(self.result(dev, "pass", "fabric neighbors match the cabling plan"))
        return out

    def _host_ports(self, dev: DevicePlan, conn: Any, plan: FabricPlan) -> list[CheckResult]:
        getter = getattr(conn, "get_arp_table", None)
        host_ports = {i.name: i for i in dev.interfaces if i.role == "host"}
        if getter is None or not host_ports:
            return []
        try:
            arp = getter()
        except NotImplementedError:
            return []
        owner = {n.address.split("/")[0]: (s, n) for s in plan.servers for n in s.nics}
        out = []
        for entry in arp:
            port = host_ports.get(entry.get("interface", ""))
            if port is None or entry.get("ip") == port.peer_address:
                continue
            found = owner.get(entry.get("ip", ""))
            if found is None:
                continue
            server, nic = found
            rail = f"rail {dev.rail}'s leaf" if dev.rail is not None else f"leaf {dev.name}"
            out.append(
                self.result(
                    dev,
                    "fail",
                    f"server {server.name} NIC {nic.index} is on {rail} ({dev.name} {port.name}); "
                    f"the plan puts it on {nic.leaf} {nic.leaf_port}",
                    f"{nic.leaf} {nic.leaf_port}",
                    f"{dev.name} {port.name}",
                )
            )
        return out


class QosState(Check):
    """QoS state is present where the platform can show it.

    The lossless and ECN state the driver can read back (kernel hash policy, PFC, ECN marking) equals the
    intended values; what a platform cannot show is reported as skip, never as a pass.
    """

    hint = "re-deploy the device, then `netfab audit` it to see which QoS lines drifted"

    id = "VERIFY-QOS"
    title = "QoS state is present where the platform can show it"

    def run(self, dev: DevicePlan, conn: Any, plan: FabricPlan) -> list[CheckResult]:
        if not isinstance(conn, ReadsQosState):
            return [self.result(dev, "skip", f"{dev.platform} driver exposes no QoS state")]
        state = conn.get_qos_state()
        out = []
        for key, expected in state.get("expected", {}).items():
            actual = state.get("actual", {}).get(key)
            status = Status.PASS if actual == expected else Status.FAIL
            out.append(self.result(dev, status, f"{key}: {actual} (intended {expected})", expected, actual))
        for note in state.get("notes", []):
            out.append(self.result(dev, "skip", note))
        return out


ALL_CHECKS: tuple[Check, ...] = (BgpSessions(), InterfacesUp(), EcmpWidth(), Cabling(), QosState())


def run_checks(
    dev: DevicePlan, conn: Any, plan: FabricPlan, checks: tuple[Check, ...] = ALL_CHECKS
) -> list[CheckResult]:
    results: list[CheckResult] = []
    for check in checks:
        try:
            results.extend(check.run(dev, conn, plan))
        except Exception as exc:  # a getter failing is a result about that device, not a crash of the run
            results.append(check_result(dev.name, check.id, Status.ERROR, f"{type(exc).__name__}: {exc}"))
    return results


CONNECT_ID = "VERIFY-CONNECT"
RULES: tuple[RuleInfo, ...] = (
    *(check.rule_info() for check in ALL_CHECKS),
    RuleInfo(
        CONNECT_ID,
        "device reachable for checks",
        Severity.ERROR,
        "netfab could open a session to the device and read its state. When it cannot, none of the other "
        "checks ran on that device: the result is an error (unknown), not a failure.",
        hint="check the inventory address, credentials and that the device's SSH/API service is up",
    ),
)
