"""Along every path of the plan: MTU on both ends and at every hop, PFC on both ends of every lossless link,
and RoCE entropy in every hop's hash.

Each rule first asks a fabric-wide question that one pass answers (is every interface at the same MTU, is
every port lossless); only an uneven plan pays for the per-link walk that names the links.
"""

from __future__ import annotations

from collections.abc import Iterator

from netfab.capabilities import capabilities_for
from netfab.core.findings import Finding, Severity
from netfab.intent.types import HashField
from netfab.lint.context import DataPath, LintContext
from netfab.lint.rule import Rule
from netfab.lint.rules._plan import fabric_link_ends, plan_of, some
from netfab.lint.rules._words import join, priorities
from netfab.lint.rules.mtu import ROCEV2_HEADER_BYTES

ENTROPY = frozenset({HashField.SRC_PORT, HashField.ROCE_DEST_QP})


class PathMtuMismatch(Rule):
    """The plan has a link whose two ends differ in MTU, or a hop whose MTU is below the NICs' RoCE packets.

    A link with unequal MTUs drops the larger frames in one direction only (the hardest fault to find); a hop
    below RoCE path MTU + RoCEv2 headers drops every full-size RoCE packet, since RoCE does not fragment. When
    every interface carries underlay.mtu this is MTU001's check, and is not repeated here.

    ```yaml
    # bad: 4096 B RoCE payloads make 4160 B packets
    underlay: {mtu: 4096}
    nic: {roce_mtu: 4096}
    # fixed
    underlay: {mtu: 9216}
    ```
    """

    id = "PLAN002"
    severity = Severity.ERROR
    title = "MTU differs along a path"
    hint = "give every fabric and host port underlay.mtu (9216 is usual), at least nic.roce_mtu + 64"
    needs_plan = True

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        plan = plan_of(ctx)
        devices = plan.devices.values()
        mtus = {i.mtu for d in devices for i in d.interfaces} | {d.mtu for d in devices}
        if mtus <= {ctx.intent.underlay.mtu}:
            return  # uniform: both ends agree, and the RoCE packet against it is MTU001's finding
        related = [("nic", "roce_mtu")]
        uneven = [
            f"{a} {up.name} ({up.mtu}) - {b} {down.name} ({down.mtu})"
            for a, up, b, down in fabric_link_ends(plan)
            if up.mtu != down.mtu
        ]
        if uneven:
            msg = f"{some(uneven, 'link')} with different MTUs on its two ends: larger frames drop one way"
            yield self.finding(ctx, ("underlay", "mtu"), msg, related=related)
        packet = plan.nic.roce_mtu + ROCEV2_HEADER_BYTES
        small = [f"{d.name} {i.name} ({i.mtu})" for d in devices for i in d.interfaces if i.mtu < packet]
        if small:
            msg = (
                f"{some(small, 'port')} below the {packet} B RoCE packets of nic.roce_mtu {plan.nic.roce_mtu}: "
                "full-size RoCE packets are dropped there"
            )
            yield self.finding(ctx, ("underlay", "mtu"), msg, related=related)


class PfcOneSided(Rule):
    """A lossless link has PFC on one end only, or GPU NICs do not pause the fabric's lossless priorities.

    PFC works per hop: the receiver pauses, the sender must honour it. A lossless port facing a port without
    PFC sends pause frames that are ignored, so its headroom overflows and the "lossless" class drops. On a
    host link the NIC's PFC vector (mlnx_qos --pfc) must include every lossless priority of the leaf port.
    (An explicit nic.pfc_priorities that differs from the fabric is NIC002's finding and is not repeated.)

    ```yaml
    # bad: fabric PFC on 3, the NICs on 4
    qos: {pfc: {priorities: [3]}}
    nic: {pfc_priorities: [4]}
    # fixed
    nic: {}
    ```
    """

    id = "PLAN003"
    severity = Severity.ERROR
    title = "PFC not on both ends of a lossless link"
    hint = "run PFC on the same priorities on both ends: omit nic.pfc_priorities so the NICs follow the fabric"
    needs_plan = True

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        plan = plan_of(ctx)
        lossless = plan.qos.pfc_priorities
        if not lossless:
            return
        where = ctx.first_written(("qos", "pfc", "priorities"), ("qos", "classes"))
        all_lossless = all(i.lossless for d in plan.devices.values() for i in d.interfaces)
        if not all_lossless:
            one_sided = [
                f"{a} {up.name} - {b} {down.name}"
                for a, up, b, down in fabric_link_ends(plan)
                if up.lossless != down.lossless
            ]
            if one_sided:
                msg = f"{some(one_sided, 'link')} with PFC on one end only: pause frames go unanswered"
                yield self.finding(ctx, where, msg)
        nic = ctx.intent.nic.pfc_priorities
        if nic is not None and sorted(set(nic)) != list(lossless):
            return  # NIC002 reports the intent's mismatch
        yield from self._nics(ctx, lossless, where, all_lossless)

    def _nics(
        self, ctx: LintContext, lossless: tuple[int, ...], where: DataPath, all_lossless: bool
    ) -> Iterator[Finding]:
        plan = plan_of(ctx)
        attached: set[str] | None = None  # None: every server sits on lossless leaf ports
        if not all_lossless:
            attached = {
                i.peer_device for d in plan.devices.values() for i in d.interfaces if i.role == "host" and i.lossless
            }
        # Servers normally share one NIC congestion plan: compare each distinct plan once.
        missing_of: dict[int, tuple[int, ...]] = {}
        short: dict[tuple[int, ...], list[str]] = {}
        for server in plan.servers:
            if attached is not None and server.name not in attached:
                continue
            vector = server.congestion
            missing = missing_of.get(id(vector))
            if missing is None:
                missing = missing_of[id(vector)] = tuple(p for p in lossless if not vector.pfc_vector[p])
            if missing:
                short.setdefault(missing, []).append(server.name)
        for missing, names in short.items():
            msg = (
                f"GPU NICs of {some(names, 'server')} do not run PFC on {priorities(missing)}, which their leaf "
                "ports pause: the leaf's pause frames are ignored"
            )
            yield self.finding(ctx, ("nic", "pfc_priorities"), msg, related=[where])


class HopWithoutEntropy(Rule):
    """A switch's platform can hash on none of the intent's RoCE entropy fields, so every RoCE flow between
    two GPUs takes one path through it.

    Entropy is the UDP source port (varied per QP by the NIC) or the BTH destination QP. An intent that hashes
    on rocev2_dest_qp only gets none on a tier whose platform cannot read the BTH (Cumulus, NX-OS, Linux), and
    the queue pairs of a GPU pair all collide there. (An intent with no entropy field at all is LB001's.)

    ```yaml
    # bad on nvidia_cumulus
    load_balancing: {hash_fields: [src_ip, dst_ip, rocev2_dest_qp]}
    # fixed
    load_balancing: {hash_fields: [src_ip, dst_ip, src_port, dst_port, rocev2_dest_qp]}
    ```
    """

    id = "PLAN004"
    severity = Severity.ERROR
    title = "Hop hashes without RoCE entropy"
    hint = "add src_port (and dst_port) to load_balancing.hash_fields: every platform hashes the UDP ports"
    needs_plan = True

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        wanted = ENTROPY & set(ctx.intent.load_balancing.hash_fields)
        if not wanted:
            return
        # Group by what decides the hash: tier, platform, release and the device's hash plan.
        groups: dict[tuple[str, str, str | None, tuple[str, ...]], list[str]] = {}
        for dev in plan_of(ctx).devices.values():
            key = (dev.role, dev.platform, dev.os_version, dev.hashing.fields)
            groups.setdefault(key, []).append(dev.name)
        for (role, platform, version, fields), names in groups.items():
            caps = capabilities_for(platform, version)
            if ENTROPY & set(fields) & caps.hashes:
                continue
            asked = join(sorted(str(f) for f in ENTROPY & set(fields)))
            msg = (
                f"the {role} tier ({caps.label}) cannot hash on {asked}, the only RoCE entropy in "
                f"load_balancing.hash_fields: every RoCE flow between two GPUs takes one path through "
                f"{some(names, role)}"
            )
            yield self.finding(ctx, ("load_balancing", "hash_fields"), msg,
                               related=[("topology", role, "platform")])  # fmt: skip


RULES: tuple[type[Rule], ...] = (PathMtuMismatch, PfcOneSided, HopWithoutEntropy)
