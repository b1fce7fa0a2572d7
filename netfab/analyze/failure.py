"""Failure domains: what one failed cable, switch or group does to a job before it happens.

For each failure the model answers the question an engineer asks before a maintenance window: which GPUs
drop out, which jobs slow down and by how much, how much capacity each tier loses, and where the traffic the
failed element carried goes.

The model is fluid ECMP over the plan's cables after BGP reconverges, with netfab's valley-free numbering
(ANALYZE006 checks the numbering allows nothing else):

- a spine reaches a leaf of its own pod down its live cables to it; a superspine reaches a leaf through the
  spines of the leaf's pod that do; any spine reaches it up through the superspines that do;
- each switch splits a destination's traffic evenly over its live next-hop cables of the shortest route (a
  leaf prefers spines one hop from the destination over routes through the superspines);
- every GPU pair of the job's collective step carries the same bytes, so a step takes the largest load per
  Gb/s over all links, NIC links included (a barrier waits for its slowest flow). The step-time factor is
  that maximum after the failure over the same before it.

Even splitting is what adaptive routing or packet spraying approaches; per-flow hashing adds its collision tax
on top (the ECMP model prices it for the intact fabric). A failed NIC cable or leaf takes its GPUs out of the
job: a synchronous job then stops until it is rescheduled, which no step-time factor describes, so those are
reported as GPUs lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from netfab.analyze.flows import FlowSet
from netfab.analyze.routing import FabricRoutes
from netfab.core.findings import Finding, Location, RuleInfo, Severity, Status
from netfab.design.plan import FabricPlan

RULE = RuleInfo(
    "ANALYZE007",
    "a failure slows or stops the job",
    Severity.INFO,
    "`netfab analyze --fail ELEMENT` / `--what-if single-failures`: after the failure and BGP's reconvergence "
    "the job's collective step takes longer (its busiest link carries more per Gb/s), or some of its GPUs lose "
    "their NIC's path and the job stops. Reported per failure, ranked by damage.",
    hint="spread the job over more leaves or pods, add uplinks to the tier named, or drain the element "
    "outside the job's window",
)


PLURAL = {"leaf": "leaves"}


class FailureSpecError(ValueError):
    """An element name that is not in the plan; the message lists what it could be."""


@dataclass(frozen=True, slots=True)
class Element:
    """What fails: switches and cables, by the plan's names."""

    label: str
    switches: frozenset[str] = frozenset()
    cables: frozenset[tuple[str, str]] = frozenset()
    """(device, port) of either end of each failed cable."""
    throttled: frozenset[tuple[tuple[str, str], float]] = frozenset()
    """(device, port) whose egress keeps only this fraction of its capacity: a degraded lane, a paused peer,
    a shaper. The link stays up and routed; only the direction leaving that port slows."""
    kind: str = "given"
    """The class a what-if element belongs to (leaf, spine, leaf-spine cable, ...); 'given' for --fail."""


@dataclass(frozen=True, slots=True)
class FailureResult:
    element: Element
    step_factor: float
    """Step time after / before; inf when part of the job's traffic has no route left."""
    gpus_lost: int
    job_gpus_lost: int
    unroutable_pairs: int
    capacity_lost_gbps: dict[str, float]
    busiest_before: str
    busiest_after: str
    pods: tuple[int, ...]
    rails: tuple[int, ...]

    @property
    def damage(self) -> tuple[int, float, int, float]:
        """Ranking key: stops the job first, then slowdown, then GPUs out, then capacity lost."""
        stops = int(self.job_gpus_lost > 0 or self.unroutable_pairs > 0)
        return (stops, self.step_factor, self.gpus_lost, sum(self.capacity_lost_gbps.values()))

    @property
    def affects_job(self) -> bool:
        return self.job_gpus_lost > 0 or self.unroutable_pairs > 0 or self.step_factor > 1 + 1e-6

    def as_dict(self) -> dict[str, Any]:
        return {
            "element": self.element.label,
            "class": self.element.kind,
            "switches": sorted(self.element.switches),
            "cables": [f"{d}:{p}" for d, p in sorted(self.element.cables)],
            "throttled": [f"{d}:{p}@{f:g}" for (d, p), f in sorted(self.element.throttled)],
            "step_time_factor": None if np.isinf(self.step_factor) else round(self.step_factor, 4),
            "job_stops": self.job_gpus_lost > 0 or self.unroutable_pairs > 0,
            "gpus_lost": self.gpus_lost,
            "job_gpus_lost": self.job_gpus_lost,
            "unroutable_gpu_pairs": self.unroutable_pairs,
            "capacity_lost_gbps": {k: round(v, 3) for k, v in self.capacity_lost_gbps.items()},
            "busiest_link_before": self.busiest_before,
            "busiest_link_after": self.busiest_after,
            "pods_degraded": list(self.pods),
            "rails_degraded": list(self.rails),
        }


@dataclass
class FailureModel:
    """The plan's cables indexed like FabricRoutes, with names, so elements map onto the routing arrays."""

    plan: FabricPlan
    routes: FabricRoutes
    flows: FlowSet
    leaf_names: list[str] = field(init=False)
    spine_names: list[str] = field(init=False)
    ss_names: list[str] = field(init=False)
    ls_ports: list[tuple[tuple[str, str], tuple[str, str]]] = field(init=False)
    sss_ports: list[tuple[tuple[str, str], tuple[str, str]]] = field(init=False)
    host_ports: dict[tuple[str, str], tuple[str, str]] = field(init=False)
    """Leaf end -> server end of every NIC cable."""
    nic_of_leaf_port: dict[tuple[str, str], int] = field(init=False)
    device_coords: dict[str, tuple[int | None, int | None]] = field(init=False)
    links_of_switch: dict[str, tuple[list[int], list[int], list[int]]] = field(init=False)
    link_of_port: dict[tuple[str, str], tuple[str, int]] = field(init=False)
    dst_cols: np.ndarray = field(init=False)
    col_of_leaf: np.ndarray = field(init=False)
    same_pod: np.ndarray = field(init=False)
    base: dict[str, Any] = field(init=False)
    before: tuple[float, str] = field(init=False)

    def __post_init__(self) -> None:
        ordered = sorted(self.plan.devices.values(), key=lambda d: (d.role, d.index))
        self.leaf_names = [d.name for d in ordered if d.role == "leaf"]
        self.spine_names = [d.name for d in ordered if d.role == "spine"]
        self.ss_names = [d.name for d in ordered if d.role == "superspine"]
        # The same cable order build_routes reads (plan.links, per tier).
        self.ls_ports = [
            ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port)) for lk in self.plan.links if lk.tier == "leaf_spine"
        ]
        self.sss_ports = [
            ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port))
            for lk in self.plan.links
            if lk.tier == "spine_superspine"
        ]
        self.host_ports = {
            (lk.a_device, lk.a_port): (lk.b_device, lk.b_port) for lk in self.plan.links if lk.tier == "host"
        }
        self.nic_of_leaf_port = {}
        g = self.routes.gpus_per_server
        for s, server in enumerate(self.plan.servers):
            for nic in server.nics[:g]:
                self.nic_of_leaf_port[(nic.leaf, nic.leaf_port)] = s * g + nic.index
        self.device_coords = {d.name: (d.pod, d.rail) for d in self.plan.devices.values()}
        # Element -> array indices, built once: what-if evaluates thousands of elements.
        self.links_of_switch = {}
        self.link_of_port = {}
        for i, (a, b) in enumerate(self.ls_ports):
            for end in (a, b):
                self.links_of_switch.setdefault(end[0], ([], [], []))[0].append(i)
                self.link_of_port[end] = ("ls", i)
        for i, (a, b) in enumerate(self.sss_ports):
            for end in (a, b):
                self.links_of_switch.setdefault(end[0], ([], [], []))[1].append(i)
                self.link_of_port[end] = ("sss", i)
        for (leaf, port), nic_id in self.nic_of_leaf_port.items():
            self.links_of_switch.setdefault(leaf, ([], [], []))[2].append(nic_id)
            self.link_of_port[(leaf, port)] = ("nic", nic_id)
            if (server_end := self.host_ports.get((leaf, port))) is not None:
                self.link_of_port[server_end] = ("nic", nic_id)
        f = self.flows
        fabric = f.src_leaf != f.dst_leaf
        self.dst_cols = np.unique(f.dst_leaf[fabric])
        self.col_of_leaf = np.full(len(self.leaf_names), -1, dtype=np.int64)
        self.col_of_leaf[self.dst_cols] = np.arange(self.dst_cols.size)
        self.same_pod = self.routes.spine_pod[:, None] == self.routes.leaf_pod[self.dst_cols][None, :]
        self.base = self._loads(*self._alive(Element("none")))
        self.before = self._busiest(self.base)

    # --- elements ----------------------------------------------------------------------------------------

    def parse(self, spec: str) -> Element:
        """'NAME' (a switch), 'DEVICE:PORT' (the cable there), 'plane:N', 'pod:N', 'pod:N:uplinks', 'rail:N';
        'DEVICE:PORT@F' keeps that port's egress at fraction F of its capacity (0.25 or 25%: slow, not down);
        join several with '+' to fail them together."""
        parts = [p.strip() for p in spec.split("+") if p.strip()]
        if not parts:
            raise FailureSpecError("an empty --fail element")
        switches: set[str] = set()
        cables: set[tuple[str, str]] = set()
        throttled: dict[tuple[str, str], float] = {}
        for part in parts:
            name, at, fraction = part.partition("@")
            if at:
                port = self._parse_one(name)[1]
                if len(port) != 1 or "@" in fraction:
                    raise FailureSpecError(f"{part!r}: only a DEVICE:PORT can be throttled, e.g. leaf1:swp3@0.5")
                throttled[port.pop()] = _fraction(part, fraction)
                continue
            s, c = self._parse_one(part)
            switches |= s
            cables |= c
        return Element(spec, frozenset(switches), frozenset(cables), frozenset(throttled.items()))

    def _parse_one(self, part: str) -> tuple[set[str], set[tuple[str, str]]]:
        devices = self.plan.devices
        if part in devices:
            return {part}, set()
        kind, _, rest = part.partition(":")
        if kind in ("plane", "pod", "rail") and rest:
            number, _, what = rest.partition(":")
            if not number.isdigit():
                raise FailureSpecError(f"{part!r}: {kind} takes a number, e.g. {kind}:1")
            n = int(number)
            if kind == "pod" and what == "uplinks":
                cables = {a for a, b in self.sss_ports if devices[b[0]].pod == n}
                if not cables:
                    raise FailureSpecError(f"{part!r}: pod {n} has no uplinks to superspines")
                return set(), cables
            if what:
                raise FailureSpecError(f"{part!r}: only pod:N:uplinks takes a third part")
            roles = {"plane": ("spine", "superspine"), "pod": ("leaf", "spine"), "rail": ("leaf",)}[kind]
            chosen = {d.name for d in devices.values() if d.role in roles and getattr(d, kind) == n}
            if not chosen:
                raise FailureSpecError(f"{part!r}: no switch of {kind} {n}")
            return chosen, set()
        device, sep, port = part.rpartition(":")
        if sep and device in devices:
            if any(i.name == port for i in devices[device].interfaces):
                return set(), {(device, port)}
            raise FailureSpecError(f"{part!r}: {device} has no port {port}")
        if any(s.name == part for s in self.plan.servers):
            raise FailureSpecError(f"{part!r} is a server; fail its cable instead, as LEAF:PORT")
        raise FailureSpecError(
            f"{part!r} is not a switch, a DEVICE:PORT cable, plane:N, pod:N, pod:N:uplinks or rail:N of this plan"
        )

    def single_failures(self, sample: int | None = None) -> tuple[list[Element], dict[str, int]]:
        """Every switch and cable, by class; with `sample`, a class larger than it keeps its `sample` elements
        that carry the most of the job's traffic (in a regular Clos the most loaded elements of a class are
        the most damaging ones). Returns the elements and each class's full size."""
        loads = self.base["loads"]
        ls_load = loads["leaf_up"] + loads["spine_down"]
        sss_load = loads["spine_up"] + loads["superspine_down"]
        nic_load = loads["host_up"] + loads["host_down"]

        def switch_load(name: str) -> float:
            ls_ids, sss_ids, nic_ids = self.links_of_switch.get(name, ([], [], []))
            return float(ls_load[ls_ids].sum() + sss_load[sss_ids].sum() + nic_load[nic_ids].sum())

        classes: dict[str, list[tuple[float, Element]]] = {
            "leaf": [(switch_load(n), Element(n, frozenset({n}))) for n in self.leaf_names],
            "spine": [(switch_load(n), Element(n, frozenset({n}))) for n in self.spine_names],
            "superspine": [(switch_load(n), Element(n, frozenset({n}))) for n in self.ss_names],
            "leaf-spine cable": [
                (float(ls_load[i]), Element(f"{b[0]}:{b[1]}", cables=frozenset({b})))
                for i, (_a, b) in enumerate(self.ls_ports)
            ],
            "spine-superspine cable": [
                (float(sss_load[i]), Element(f"{b[0]}:{b[1]}", cables=frozenset({b})))
                for i, (_a, b) in enumerate(self.sss_ports)
            ],
            "NIC cable": [
                (float(nic_load[nic]), Element(f"{leaf}:{port}", cables=frozenset({(leaf, port)})))
                for (leaf, port), nic in self.nic_of_leaf_port.items()
            ],
        }
        out: list[Element] = []
        sizes = {k: len(v) for k, v in classes.items() if v}
        for kind, members in classes.items():
            if sample is not None and len(members) > sample:
                # Stable order: load, then name, so the same sample comes back on every run.
                members = sorted(members, key=_by_load_then_name)[:sample]
            out += [Element(e.label, e.switches, e.cables, kind=kind) for _load, e in members]
        return out, sizes

    # --- the model ---------------------------------------------------------------------------------------

    def _alive(self, element: Element) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ls = np.ones(len(self.ls_ports), dtype=bool)
        sss = np.ones(len(self.sss_ports), dtype=bool)
        nic = np.ones(self.routes.nic_leaf.size, dtype=bool)
        arrays = {"ls": ls, "sss": sss, "nic": nic}
        for sw in element.switches:
            ls_ids, sss_ids, nic_ids = self.links_of_switch.get(sw, ([], [], []))
            ls[ls_ids] = False
            sss[sss_ids] = False
            nic[nic_ids] = False
        for port in element.cables:
            kind, index = self.link_of_port[port]
            arrays[kind][index] = False
        return ls, sss, nic

    def _carries_job_traffic(self, ls: np.ndarray, sss: np.ndarray, nic: np.ndarray) -> bool:
        loads = self.base["loads"]
        return bool(
            (loads["leaf_up"][~ls] + loads["spine_down"][~ls]).any()
            or (loads["spine_up"][~sss] + loads["superspine_down"][~sss]).any()
            or (loads["host_up"][~nic] + loads["host_down"][~nic]).any()
        )

    def _loads(self, ls_alive: np.ndarray, sss_alive: np.ndarray, nic_alive: np.ndarray) -> dict[str, Any]:
        """Fluid loads (flows per link) and the pairs left without a route."""
        r, f = self.routes, self.flows
        n_l, n_s, n_x = len(r.leaf_names), r.spine_pod.size, r.superspine_seed.size
        ok = nic_alive[f.src_nic] & nic_alive[f.dst_nic]
        loads = {
            "host_up": np.bincount(f.src_nic[ok], minlength=r.nic_leaf.size).astype(float),
            "host_down": np.bincount(f.dst_nic[ok], minlength=r.nic_leaf.size).astype(float),
            "leaf_up": np.zeros(r.ls_leaf.size),
            "spine_down": np.zeros(r.ls_leaf.size),
            "spine_up": np.zeros(r.sss_spine.size),
            "superspine_down": np.zeros(r.sss_spine.size),
        }
        fabric = np.flatnonzero(ok & (f.src_leaf != f.dst_leaf))
        lost = int((~ok).sum())
        if fabric.size == 0:
            return {"loads": loads, "unroutable": lost}
        # Reachability after the failure towards the job's destination leaves only (columns = self.dst_cols).
        cols, col_of = self.dst_cols, self.col_of_leaf
        cnt_ls = np.bincount(r.ls_spine[ls_alive] * n_l + r.ls_leaf[ls_alive], minlength=n_s * n_l).reshape(n_s, n_l)
        reach1 = (cnt_ls[:, cols] > 0) & self.same_pod
        if n_x:
            adj = np.bincount(r.sss_superspine[sss_alive] * n_s + r.sss_spine[sss_alive], minlength=n_x * n_s).reshape(
                n_x, n_s
            )
            reach2 = (adj > 0).astype(np.float32) @ reach1.astype(np.float32) > 0
            # Spines of a pod share one ASN (RFC 7938): the loop check rejects a route to a leaf of their own
            # pod that comes back down through a superspine, so in-pod traffic never climbs above the spines.
            reach3 = ((adj.T > 0).astype(np.float32) @ reach2.astype(np.float32) > 0) & ~self.same_pod
        else:
            reach2 = np.zeros((0, cols.size), dtype=bool)
            reach3 = np.zeros((n_s, cols.size), dtype=bool)
        # Aggregate the job's pairs per (source leaf, destination leaf): fan-out grows with those, not with QPs.
        key = f.src_leaf[fabric] * n_l + f.dst_leaf[fabric]
        keys, w = np.unique(key, return_counts=True)
        a, d, w = keys // n_l, keys % n_l, w.astype(float)
        # Leaf -> spine: prefer spines one hop from the destination.
        m = r.leaf_up.members[a]
        live = (np.arange(m.shape[1])[None, :] < r.leaf_up.size[a][:, None]) & ls_alive[m]
        sp = r.ls_spine[m]
        near = live & reach1[sp, col_of[d][:, None]]
        far = live & reach3[sp, col_of[d][:, None]]
        use = np.where(near.any(axis=1)[:, None], near, far)
        n_use = use.sum(axis=1)
        routed = n_use > 0
        lost += int(w[~routed].sum())
        share = np.where(use, (w / np.maximum(n_use, 1))[:, None], 0.0)
        loads["leaf_up"] += np.bincount(m[use], weights=share[use], minlength=loads["leaf_up"].size)
        # Arrivals at spines: (spine, destination, weight).
        s_arr, d_arr, w_arr = _collapse(sp[use], np.broadcast_to(d[:, None], use.shape)[use], share[use], n_l)
        here = reach1[s_arr, col_of[d_arr]]
        down_s, down_d, down_w = [s_arr[here]], [d_arr[here]], [w_arr[here]]
        up = ~here
        if up.any():
            s_up, d_up, w_up = s_arr[up], d_arr[up], w_arr[up]
            m = r.spine_up.members[s_up]
            live = (np.arange(m.shape[1])[None, :] < r.spine_up.size[s_up][:, None]) & sss_alive[m]
            x = r.sss_superspine[m]
            use = live & reach2[x, col_of[d_up][:, None]]
            n_use = use.sum(axis=1)
            lost += int(np.round(w_up[n_use == 0].sum()))
            share = np.where(use, (w_up / np.maximum(n_use, 1))[:, None], 0.0)
            loads["spine_up"] += np.bincount(m[use], weights=share[use], minlength=loads["spine_up"].size)
            x_arr, dx, wx = _collapse(x[use], np.broadcast_to(d_up[:, None], use.shape)[use], share[use], n_l)
            group = x_arr * r.pods + r.leaf_pod[dx]
            m = r.superspine_down.members[group]
            live = (np.arange(m.shape[1])[None, :] < r.superspine_down.size[group][:, None]) & sss_alive[m]
            use = live & reach1[r.sss_spine[m], col_of[dx][:, None]]
            n_use = use.sum(axis=1)
            lost += int(np.round(wx[n_use == 0].sum()))
            share = np.where(use, (wx / np.maximum(n_use, 1))[:, None], 0.0)
            loads["superspine_down"] += np.bincount(m[use], weights=share[use], minlength=loads["superspine_down"].size)
            down_s.append(r.sss_spine[m][use])
            down_d.append(np.broadcast_to(dx[:, None], use.shape)[use])
            down_w.append(share[use])
        s_dn, d_dn, w_dn = _collapse(np.concatenate(down_s), np.concatenate(down_d), np.concatenate(down_w), n_l)
        start, size = r.bundle_start[s_dn, d_dn], r.bundle_size[s_dn, d_dn]
        rows = np.repeat(np.arange(s_dn.size), size)
        offset = np.arange(rows.size) - np.repeat(np.cumsum(size) - size, size)
        links = r.bundle_links[start[rows] + offset]
        live = ls_alive[links]
        per = np.bincount(rows[live], minlength=s_dn.size)
        loads["spine_down"] += np.bincount(
            links[live], weights=(w_dn / np.maximum(per, 1))[rows[live]], minlength=loads["spine_down"].size
        )
        return {"loads": loads, "unroutable": lost}

    def _capacity_scale(self, element: Element) -> dict[str, np.ndarray]:
        """Per tier, the fraction of each directed link's capacity left by the element's throttled ports."""
        scale: dict[str, np.ndarray] = {}
        for port, fraction in element.throttled:
            kind, i = self.link_of_port[port]
            if kind == "ls":
                tier = "spine_down" if port == self.ls_ports[i][0] else "leaf_up"
            elif kind == "sss":
                tier = "superspine_down" if port == self.sss_ports[i][0] else "spine_up"
            else:  # a NIC cable: the leaf end sends to the NIC, the server end from it
                tier = "host_down" if port in self.nic_of_leaf_port else "host_up"
            scale.setdefault(tier, np.ones(self.routes.tier_sizes[tier]))[i] *= fraction
        return scale

    def _busiest(self, result: dict[str, Any], scale: dict[str, np.ndarray] | None = None) -> tuple[float, str]:
        best, name = 0.0, "-"
        for tier, load in result["loads"].items():
            if load.size == 0:
                continue
            util = load / self.routes.tier_gbps(tier)
            if scale and tier in scale:
                util = util / scale[tier]
            i = int(util.argmax())
            if util[i] > best + 1e-12:
                best, name = float(util[i]), self._link_name(tier, i)
        return best, name

    def _link_name(self, tier: str, i: int) -> str:
        if tier in ("leaf_up", "spine_down"):
            (sa, pa), (lb, pb) = self.ls_ports[i]
            return f"{lb}:{pb} -> {sa}" if tier == "leaf_up" else f"{sa}:{pa} -> {lb}"
        if tier in ("spine_up", "superspine_down"):
            (xa, pa), (sb, pb) = self.sss_ports[i]
            return f"{sb}:{pb} -> {xa}" if tier == "spine_up" else f"{xa}:{pa} -> {sb}"
        g = self.routes.gpus_per_server
        server = self.routes.server_names[i // g]
        return f"{server} NIC {i % g} ({'out' if tier == 'host_up' else 'in'})"

    def evaluate(self, element: Element) -> FailureResult:
        ls, sss, nic = self._alive(element)
        # Removing links the job does not use changes none of its routes: equal splitting puts load on every
        # link of every route towards its destinations, so an unloaded link is on none of them.
        result = self._loads(ls, sss, nic) if self._carries_job_traffic(ls, sss, nic) else self.base
        scale = self._capacity_scale(element)
        after = self._busiest(result, scale)
        f = self.flows
        job_nics = np.unique(np.concatenate([f.src_nic, f.dst_nic]))
        r = self.routes
        lost_cap = {
            "leaf_spine": float(r.ls_gbps[~ls].sum()),
            "spine_superspine": float(r.sss_gbps[~sss].sum()),
            "nic": float((~nic).sum() * r.nic_gbps),
            "throttled": float(sum(((1 - f) * r.tier_gbps(t)).sum() for t, f in scale.items())),
        }
        pods, rails = set(), set()
        for i in np.flatnonzero(~ls):
            for dev in (self.ls_ports[i][0][0], self.ls_ports[i][1][0]):
                pod, rail = self.device_coords[dev]
                pods.update([pod] if pod else [])
                rails.update([rail] if rail else [])
        for i in np.flatnonzero(~sss):
            pod = self.device_coords[self.sss_ports[i][1][0]][0]
            pods.update([pod] if pod else [])
        for sw in element.switches:
            pod, rail = self.device_coords.get(sw, (None, None))
            pods.update([pod] if pod else [])
            rails.update([rail] if rail else [])
        before = self.before[0]
        factor = after[0] / before if before > 0 else 1.0
        if result["unroutable"]:
            factor = float("inf")
        return FailureResult(
            element=element,
            step_factor=factor,
            gpus_lost=int((~nic).sum()),
            job_gpus_lost=int((~nic[job_nics]).sum()),
            unroutable_pairs=int(result["unroutable"]) - int((~(nic[f.src_nic] & nic[f.dst_nic])).sum()),
            capacity_lost_gbps={k: v for k, v in lost_cap.items() if v},
            busiest_before=self.before[1],
            busiest_after=after[1],
            pods=tuple(sorted(pods)),
            rails=tuple(sorted(rails)),
        )


def _fraction(part: str, text: str) -> float:
    """'0.25' or '25%' -> 0.25, strictly between 0 and 1 (a port at 0 is down: fail its cable instead)."""
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 1:
        raise FailureSpecError(f"{part!r}: the capacity left after '@' is a fraction in (0, 1), e.g. @0.5 or @50%")
    return value


def _by_load_then_name(entry: tuple[float, Element]) -> tuple[float, str]:
    load, element = entry
    return (-load, element.label)


def _collapse(a: np.ndarray, b: np.ndarray, w: np.ndarray, b_range: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keys, inverse = np.unique(a * b_range + b, return_inverse=True)
    return keys // b_range, keys % b_range, np.bincount(inverse, weights=w)


def failure_findings(
    results: list[FailureResult], source_file: str, job_gpus: int, sizes: dict[str, int] | None = None
) -> list[Finding]:
    """One finding per --fail element; for a what-if, one per class: its worst element, and how many of the
    class were evaluated and hurt the job."""
    where = Location(source_file)
    ranked = sorted(results, key=lambda r: r.damage, reverse=True)
    chosen: list[tuple[FailureResult, str]] = [(r, "") for r in ranked if r.element.kind == "given"]
    for kind, size in (sizes or {}).items():
        members = [r for r in ranked if r.element.kind == kind]
        if members:
            hurt = sum(r.affects_job for r in members)
            plural = PLURAL.get(kind, kind + "s")
            scope = f" (worst of {len(members):,} evaluated of {size:,} {plural}; {hurt:,} hurt the job)"
            chosen.append((members[0], scope))
    out = []
    for res, scope in chosen:
        if res.job_gpus_lost or res.unroutable_pairs:
            what = f"stops the {job_gpus}-GPU job: {res.job_gpus_lost} of its GPUs lose their NIC path" + (
                f", {res.unroutable_pairs} GPU pairs have no route" if res.unroutable_pairs else ""
            )
        elif res.step_factor > 1 + 1e-6:
            what = (
                f"slows the {job_gpus}-GPU job's step {res.step_factor:.2f}x: busiest link {res.busiest_after} "
                f"(was {res.busiest_before})"
            )
        else:
            what = f"costs the {job_gpus}-GPU job nothing: its busiest link stays {res.busiest_before}"
        lost = ", ".join(f"{k} {v:g} Gb/s" for k, v in res.capacity_lost_gbps.items()) or "no capacity"
        out.append(
            Finding(
                RULE.id,
                Severity.INFO,
                f"failing {res.element.label} {what}; {res.gpus_lost} GPUs out; {lost} lost{scope}",
                where,
                hint=RULE.hint if res.affects_job else "",
                status=Status.FAIL if res.affects_job else Status.PASS,
                subject=res.element.label,
            )
        )
    return out
