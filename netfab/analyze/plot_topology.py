"""topology.svg: the fabric's shape at a glance - tiers, planes, pods or scalable units, rails - with counts.

A 24k-GPU fabric has 1,692 switches; drawing each would be unreadable. Tiers are drawn as grouped blocks
labelled with counts, link bundles as one line labelled with the per-switch uplinks, speed and the tier's
measured oversubscription. Past a handful of pods or SUs the middle ones collapse into an ellipsis.
"""

from __future__ import annotations

from netfab.analyze.capacity import Capacity
from netfab.analyze.svg import PALETTE, Svg
from netfab.intent import Intent

WIDTH = 980
MAX_GROUPS = 6
"""Pods or SUs drawn before the middle ones collapse into an ellipsis."""


def _shown(n: int) -> list[int | None]:
    """Group indices to draw (0-based); None marks the ellipsis."""
    if n <= MAX_GROUPS:
        return list(range(n))
    return [0, 1, 2, 3, None, n - 1]


def _ratio(x: float) -> str:
    return "1:1" if abs(x - 1) < 1e-9 else f"{x:.2f}:1"


def _gbps(g: float) -> str:
    return f"{g / 1000:g} Tb/s" if g >= 1000 else f"{g:g} Gb/s"


def topology_svg(intent: Intent, capacity: Capacity, fabric: str) -> str:
    t = intent.topology
    gpus = capacity.gpus
    svg = Svg(WIDTH, 520, f"{fabric} topology")
    style = {"rail_optimized": "rail-optimized leaf/spine", "clos3": "3-tier Clos (pods)"}[t.style]
    if t.style == "clos3" and t.superspine is None:
        style = "2-tier top-of-rack leaf/spine"
    svg.text(20, 28, f"{fabric}: {style}, {gpus:,} GPUs ({t.server_count:,} servers x {t.servers.gpus_per_server})",
             size=16, weight="bold")  # fmt: skip
    if t.style == "rail_optimized":
        _rail(svg, intent, capacity)
    elif t.superspine is None:
        _tor(svg, intent, capacity)
    else:
        _clos3(svg, intent, capacity)
    _legend(svg, capacity)
    return svg.render()


def _group_boxes(n: int, y: float, h: float) -> list[tuple[int | None, float, float]]:
    shown = _shown(n)
    gap = 14
    w = (WIDTH - 40 - gap * (len(shown) - 1)) / len(shown)
    return [(i, 20 + k * (w + gap), w) for k, i in enumerate(shown)] if n else []


def _rail(svg: Svg, intent: Intent, cap: Capacity) -> None:
    t = intent.topology
    spines = t.spine.count or 0
    rails = t.rail_count
    leaf = cap.tiers["leaf"]
    # Spine tier: one block, individual switches ticked in when there are few enough to count.
    svg.rect(20, 50, WIDTH - 40, 60, fill="#e8eef6", stroke="#4e79a7", rx=6, tooltip=f"{spines} spines")
    svg.text(
        WIDTH / 2, 72, f"spine tier: {spines} spines ({t.spine.platform})", size=13, anchor="middle", weight="bold"
    )
    if spines <= 64:
        w = (WIDTH - 80) / spines
        for s in range(spines):
            svg.rect(40 + s * w + 1, 82, max(w - 2, 1), 18, fill="#4e79a7", stroke="none", tooltip=f"spine {s + 1}")
    sus = t.scalable_units or 0
    boxes = _group_boxes(sus, 190, 250)
    for k, (i, x, w) in enumerate(boxes):
        if i is None:
            svg.text(x + w / 2, 320, f"... {sus - MAX_GROUPS + 1} more SUs ...", size=13, anchor="middle")
            continue
        svg.line(x + w / 2, 190, x + w / 2, 110, stroke="#888888", width=2)
        if k == 0:
            svg.text(x + w / 2 + 6, 150, f"each leaf: {t.leaf.uplinks} x {t.leaf.uplink_speed}G up", size=11)
            svg.text(x + w / 2 + 6, 164, f"leaf {_ratio(leaf.oversubscription)}, {t.leaf.uplink_cable_m:g} m", size=11)
        svg.rect(x, 190, w, 250, fill="#fafafa", stroke="#999999", rx=6, tooltip=f"scalable unit {i + 1}")
        svg.text(x + 8, 208, f"SU {i + 1}", size=13, weight="bold")
        shown_rails = min(rails, 16)
        rw = (w - 16) / shown_rails
        for r in range(shown_rails):
            color = PALETTE[r % len(PALETTE)]
            svg.rect(x + 8 + r * rw + 1, 218, max(rw - 2, 1), 40, fill=color, stroke="none",
                     tooltip=f"SU {i + 1} rail {r + 1} leaf")  # fmt: skip
        svg.text(
            x + w / 2, 274, f"{rails} rail leaves" + (" (16 drawn)" if rails > 16 else ""), size=11, anchor="middle"
        )
        svg.rect(x + 8, 290, w - 16, 120, fill="#f0f0f0", stroke="#bbbbbb", rx=4)
        svg.text(x + w / 2, 330, f"{t.servers_per_su} servers", size=12, anchor="middle", weight="bold")
        svg.text(x + w / 2, 348, f"x {t.servers.gpus_per_server} GPUs / NICs", size=11, anchor="middle")
        svg.text(x + w / 2, 366, f"NIC i -> rail leaf i, {t.servers.nic_speed}G", size=11, anchor="middle")
        gpus_per_su = (t.servers_per_su or 0) * t.servers.gpus_per_server
        svg.text(x + w / 2, 384, f"{gpus_per_su} GPUs per SU", size=11, anchor="middle")


def _tor(svg: Svg, intent: Intent, cap: Capacity) -> None:
    """One pod, no superspine: a spine tier over top-of-rack leaves (counts only, like the other styles)."""
    t = intent.topology
    leaf = cap.tiers["leaf"]
    svg.rect(20, 50, WIDTH - 40, 56, fill="#f6efe6", stroke="#999999", rx=6)
    svg.text(WIDTH / 2, 82, f"{t.spine.count} spines ({t.spine.platform})", size=13, anchor="middle", weight="bold")
    racks = t.racks_per_pod or 0
    svg.rect(20, 150, WIDTH - 40, 80, fill="#e8f0f8", stroke="#999999", rx=6)
    svg.text(WIDTH / 2, 182, f"{racks} top-of-rack leaves ({t.leaf.platform})", size=13, anchor="middle", weight="bold")
    svg.text(WIDTH / 2, 204, f"leaf {_ratio(leaf.oversubscription)}, {t.leaf.uplinks} x {t.leaf.uplink_speed}G up",
             size=11, anchor="middle")  # fmt: skip
    svg.rect(20, 290, WIDTH - 40, 80, fill="#f0f0f0", stroke="#bbbbbb", rx=4)
    svg.text(WIDTH / 2, 322, f"{t.servers_per_rack} servers per rack x {t.servers.nic_count} NICs at "
             f"{t.servers.nic_speed}G", size=12, anchor="middle", weight="bold")  # fmt: skip


def _clos3(svg: Svg, intent: Intent, cap: Capacity) -> None:
    t = intent.topology
    assert t.superspine is not None
    planes = t.planes
    supers = t.superspine.count or 0
    spine = cap.tiers["spine"]
    leaf = cap.tiers["leaf"]
    pw = (WIDTH - 40 - 10 * (planes - 1)) / planes
    for p in range(planes):
        x = 20 + p * (pw + 10)
        per_plane = supers // planes + (1 if p < supers % planes else 0)
        svg.rect(x, 50, pw, 56, fill="#f6efe6", stroke=PALETTE[p % len(PALETTE)], rx=6, stroke_width=2,
                 tooltip=f"plane {p + 1}: {per_plane} superspines")  # fmt: skip
        svg.text(x + pw / 2, 72, f"plane {p + 1}", size=12, anchor="middle", weight="bold")
        svg.text(x + pw / 2, 90, f"{per_plane} superspines", size=11, anchor="middle")
    pods = t.pods or 0
    per_pod = t.spine.count or 0
    for k, (i, x, w) in enumerate(_group_boxes(pods, 200, 250)):
        if i is None:
            svg.text(x + w / 2, 320, f"... {pods - MAX_GROUPS + 1} more pods ...", size=13, anchor="middle")
            continue
        for p in range(planes):
            px = 20 + p * (pw + 10) + pw / 2
            svg.line(x + w / 2, 200, px, 106, stroke=PALETTE[p % len(PALETTE)], width=1)
        if k == 0:
            svg.text(x + 4, 150, f"each spine: {t.spine.uplinks} x {t.spine.uplink_speed}G up", size=11)
            svg.text(x + 4, 164, f"spine {_ratio(spine.oversubscription)}, {t.spine.uplink_cable_m:g} m", size=11)
        svg.rect(x, 200, w, 250, fill="#fafafa", stroke="#999999", rx=6, tooltip=f"pod {i + 1}")
        svg.text(x + 8, 218, f"pod {i + 1}", size=13, weight="bold")
        sw = (w - 16) / per_pod if per_pod else 0
        for s in range(per_pod):
            svg.rect(x + 8 + s * sw + 0.5, 226, max(sw - 1, 0.5), 26, fill=PALETTE[s % planes % len(PALETTE)],
                     stroke="none", tooltip=f"pod {i + 1} spine {s + 1} (plane {s % planes + 1})")  # fmt: skip
        svg.text(x + w / 2, 268, f"{per_pod} spines", size=11, anchor="middle")
        svg.line(x + w / 2, 274, x + w / 2, 292, stroke="#888888", width=2)
        svg.rect(x + 8, 292, w - 16, 40, fill="#dfe9dc", stroke="#59a14f", rx=4)
        svg.text(x + w / 2, 316, f"{t.racks_per_pod} rack leaves", size=11, anchor="middle", weight="bold")
        if k == 0:
            svg.text(x + w / 2 + 4, 288, f"{t.leaf.uplinks} x {t.leaf.uplink_speed}G, {_ratio(leaf.oversubscription)}",
                     size=10)  # fmt: skip
        svg.rect(x + 8, 344, w - 16, 90, fill="#f0f0f0", stroke="#bbbbbb", rx=4)
        servers = (t.racks_per_pod or 0) * (t.servers_per_rack or 0)
        svg.text(x + w / 2, 374, f"{servers} servers", size=12, anchor="middle", weight="bold")
        svg.text(x + w / 2, 392, f"{t.servers_per_rack} per rack x {t.servers.gpus_per_server} GPUs", size=11,
                 anchor="middle")  # fmt: skip
        svg.text(x + w / 2, 410, f"{servers * t.servers.gpus_per_server:,} GPUs, {t.servers.nic_speed}G NICs",
                 size=11, anchor="middle")  # fmt: skip


def _legend(svg: Svg, cap: Capacity) -> None:
    y = 470
    parts = [
        f"{name}: {_ratio(tier.oversubscription)} ({_gbps(tier.down_gbps)} down / {_gbps(tier.up_gbps)} up per switch)"
        for name, tier in cap.tiers.items()
    ]
    svg.text(20, y, "oversubscription  " + "   ".join(parts), size=12)
    scopes = [
        f"{name} {_gbps(s.bisection_gbps)} ({s.bisection_gbps / (s.gpus / 2):.1f} Gb/s per GPU, {s.limit})"
        for name, s in cap.scopes.items()
        if s.gpus > 1
    ]
    svg.text(20, y + 22, "bisection  " + "   ".join(scopes), size=12)
