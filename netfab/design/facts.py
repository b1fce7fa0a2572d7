"""Fabric-wide facts, computed once per fabric: the QoS tables, hashing and the NIC congestion plan."""

from __future__ import annotations

import zlib

from netfab.design.plan import EcnPlan, HashPlan, NicCongestionPlan, QosPlan, QueuePlan, WatchdogPlan
from netfab.intent import Intent


def qos_plan(intent: Intent) -> QosPlan:
    qos = intent.qos
    queues = tuple(
        QueuePlan(
            queue=c.priority,
            class_name=c.name,
            kind=c.kind,
            dscp=tuple(sorted(c.dscp)),
            lossless=c.lossless,
            scheduling=c.scheduling,
            weight=c.weight,
            ecn=EcnPlan(c.ecn.kmin, c.ecn.kmax, c.ecn.pmax, c.ecn.weight) if c.ecn else None,
            max_rate_percent=c.max_rate_percent if c.scheduling == "strict" else None,
        )
        for c in sorted(qos.classes, key=lambda c: c.priority)
    )
    default = qos.class_of_kind("default")
    default_queue = default.priority if default else 0
    dscp_map = dict.fromkeys(range(64), default_queue)
    for c in qos.classes:
        for d in c.dscp:
            dscp_map[d] = c.priority
    wd = qos.pfc.watchdog
    watchdog = (
        WatchdogPlan(detect_us=wd.detect, restore_us=wd.restore, polling_us=wd.polling, action=wd.action)
        if wd is not None and wd.enabled
        else None
    )
    return QosPlan(
        trust=qos.trust,
        dscp_to_queue=dscp_map,
        queues=queues,
        pfc_priorities=tuple(qos.pfc_priorities),
        watchdog=watchdog,
        headroom=qos.buffers.headroom,
    )


def hash_plan(intent: Intent) -> HashPlan:
    lb = intent.load_balancing
    return HashPlan(
        fields=tuple(str(f) for f in lb.hash_fields),
        adaptive_routing=lb.adaptive_routing,
        packet_spraying=lb.packet_spraying,
        qps_per_gpu_pair=lb.qps_per_gpu_pair,
        seed=lb.hash_seed,
    )


def device_hash_seed(plan: HashPlan, device: str) -> int:
    # Same function + same seed on every tier = polarisation (every hop makes the same choice), so
    # without an explicit seed each device gets a stable seed of its own.
    return plan.seed if plan.seed is not None else zlib.crc32(device.encode()) & 0x7FFFFFFF


def nic_plan(intent: Intent, qos: QosPlan) -> NicCongestionPlan:
    nic = intent.nic
    roce = qos.roce_queue
    cnp_np = nic.dcqcn.np
    pfc = tuple(nic.pfc_priorities if nic.pfc_priorities is not None else qos.pfc_priorities)
    roce_dscp = nic.roce_dscp if nic.roce_dscp is not None else (roce.dscp[0] if roce and roce.dscp else 26)
    rp = nic.dcqcn.rp
    strict = {q.queue for q in qos.queues if q.scheduling == "strict"}
    weights = {q.queue: round(q.weight or 0) for q in qos.queues if q.scheduling == "dwrr"}
    tsa = tuple("strict" if tc in strict else "ets" for tc in range(8))
    total = sum(weights.values())
    tc_bw = [weights.get(tc, 0) for tc in range(8)]
    if total and total != 100:
        # mlnx_qos refuses ETS shares that do not sum to 100; put the rounding remainder on the largest.
        tc_bw[max(weights, key=lambda k: weights[k])] += 100 - total
    # mlx5 reserves 96 bytes of RoCEv2 headers (GRH/IP, UDP, BTH, ICRC) below the netdev MTU; NVIDIA's 4200
    # for a 4096 path MTU is roce_mtu + 104. At least 1500 for the host's ordinary traffic.
    host_mtu = nic.mtu if nic.mtu is not None else max(1500, nic.roce_mtu + 104)
    return NicCongestionPlan(
        host_mtu=host_mtu,
        rdma=roce is not None,
        trust=nic.trust,
        pfc_vector=tuple(1 if p in pfc else 0 for p in range(8)),
        roce_dscp=roce_dscp,
        roce_priority=qos.dscp_to_queue[roce_dscp],
        roce_mtu=nic.roce_mtu,
        cnp_dscp=cnp_np.cnp_dscp,
        cnp_priority=cnp_np.cnp_priority,
        dcqcn_enabled=nic.dcqcn.enabled,
        dcqcn_priorities=tuple(nic.dcqcn.priorities if nic.dcqcn.priorities is not None else qos.pfc_priorities),
        rp={
            "rate_reduce_monitor_period": rp.rate_reduce_monitor_period,
            "rpg_time_reset": rp.time_reset,
            "rpg_byte_reset": rp.byte_reset,
            "rpg_threshold": rp.threshold,
            "rpg_ai_rate": rp.ai_rate,
            "rpg_hai_rate": rp.hai_rate,
            "rpg_max_rate": rp.max_rate,
            "rpg_min_rate": rp.min_rate,
            "rpg_min_dec_fac": round(rp.min_dec_fac),
            "rpg_gd": rp.gd,
            "initial_alpha_value": rp.initial_alpha,
            "dce_tcp_g": rp.dce_tcp_g,
            "dce_tcp_rtt": rp.dce_tcp_rtt,
            "clamp_tgt_rate": int(rp.clamp_tgt_rate),
            "clamp_tgt_rate_after_time_inc": int(rp.clamp_tgt_rate_after_time_inc),
        },
        np={
            "min_time_between_cnps": cnp_np.min_time_between_cnps,
            "cnp_dscp": cnp_np.cnp_dscp,
            "cnp_802p_prio": cnp_np.cnp_priority,
        },
        dscp_to_priority=dict(qos.dscp_to_queue),
        tsa=tsa,
        tc_bw=tuple(tc_bw),
    )
