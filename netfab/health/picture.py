"""The fabric's links per tier, coloured by tail score: SVG (drawn with analyze's SVG primitives) and PNG.

A small fabric (up to MAX_DRAWN devices) is drawn as its graph, tier above tier, each link a line in its
colour; every fabric also gets one strip per tier, a cell per link sorted worst first, so the tail of a
10,000-switch fleet fits on a page. PNG is the same SVG rasterised by CairoSVG (the `png` extra).
"""

from __future__ import annotations

from pathlib import Path

from netfab.analyze.svg import Svg
from netfab.health.analysis import HealthReport, PortHealth
from netfab.health.scoring import Z_OUTLIER

MAX_DRAWN = 64
MAX_CELLS = 400
_ROWS = ("superspine", "spine", "leaf", "host")
_TIERS = ("spine_superspine", "leaf_spine", "host")
COLOURS = (("slow", "#e15759"), ("outlier", "#f28e2b"), ("raised", "#edc948"), ("normal", "#59a14f"))


def colour(p: PortHealth) -> str:
    if p.slow_by:
        return COLOURS[0][1]
    if p.score >= Z_OUTLIER:
        return COLOURS[1][1]
    if p.score >= 1.0:
        return COLOURS[2][1]
    return COLOURS[3][1]


def _links(report: HealthReport) -> dict[str, list[PortHealth]]:
    """Per tier, one entry per link: the worse of its two ends (a switch port and its peer)."""
    by_key = {(p.meta.device, p.meta.port): p for p in report.ports}
    seen: set[frozenset[tuple[str, str]]] = set()
    out: dict[str, list[PortHealth]] = {}
    for p in report.ports:
        ends = frozenset({(p.meta.device, p.meta.port), (p.meta.peer_device, p.meta.peer_port)})
        if ends in seen:
            continue
        seen.add(ends)
        other = by_key.get((p.meta.peer_device, p.meta.peer_port))
        worse = p if other is None or (bool(p.slow_by), p.score) >= (bool(other.slow_by), other.score) else other
        out.setdefault(p.meta.tier, []).append(worse)
    return out


def fabric_svg(report: HealthReport) -> str:
    links = _links(report)
    devices = sorted({p.meta.device for p in report.ports})
    draw_graph = len(devices) <= MAX_DRAWN
    width = 1000.0
    graph_h = 90.0 * len([r for r in _ROWS if any(p.meta.role == r for p in report.ports)]) if draw_graph else 0.0
    height = 70 + graph_h + 70 * len(links) + 40
    svg = Svg(width, height, "netfab health: links per tier by tail score")
    svg.text(20, 28, f"links per tier, coloured by tail score ({len(report.devices)} devices, "
             f"{report.window_s:.2f} s window)", 16, weight="bold")  # fmt: skip
    y = 50.0
    if draw_graph:
        y = _graph(svg, report, links, y, width)
    for tier in [t for t in _TIERS if t in links] + sorted(set(links) - set(_TIERS)):
        y = _strip(svg, tier, links[tier], y, width)
    x = 20.0
    for label, fill in COLOURS:
        svg.rect(x, height - 28, 14, 14, fill=fill, stroke="none")
        svg.text(x + 20, height - 16, label, 12)
        x += 110
    return svg.render()


def _graph(svg: Svg, report: HealthReport, links: dict[str, list[PortHealth]], y: float, width: float) -> float:
    rows = [r for r in _ROWS if any(p.meta.role == r for p in report.ports)]
    where: dict[str, tuple[float, float]] = {}
    for i, role in enumerate(rows):
        names = sorted({p.meta.device for p in report.ports if p.meta.role == role})
        step = (width - 80) / max(1, len(names))
        for j, name in enumerate(names):
            where[name] = (40 + step * (j + 0.5), y + 20 + 90 * i)
    for tier_links in links.values():
        for p in tier_links:
            a, b = where.get(p.meta.device), where.get(p.meta.peer_device)
            if a and b:
                svg.line(a[0], a[1], b[0], b[1], stroke=colour(p), width=4 if p.slow_by else 2)
    for name, (cx, cy) in where.items():
        svg.rect(cx - 30, cy - 10, 60, 20, fill="#ffffff", stroke="#333333", rx=3, tooltip=name)
        svg.text(cx, cy + 4, name, 10, anchor="middle")
    return y + 90 * len(rows) + 10


def _strip(svg: Svg, tier: str, ports: list[PortHealth], y: float, width: float) -> float:
    ranked = sorted(ports, key=lambda p: (-int(bool(p.slow_by)), -p.score, p.meta.device, p.meta.port))
    shown = ranked[:MAX_CELLS]
    svg.text(20, y + 14, f"{tier}: {len(ports)} links, {sum(1 for p in ports if p.slow_by)} slow"
             + (f" (worst {MAX_CELLS} shown)" if len(ports) > MAX_CELLS else ""), 12, weight="bold")  # fmt: skip
    cell = min(20.0, (width - 40) / max(1, len(shown)))
    for i, p in enumerate(shown):
        tip = f"{p.meta.device} {p.meta.port} -> {p.meta.peer_device} {p.meta.peer_port}: score {p.score:.1f}"
        svg.rect(20 + i * cell, y + 22, max(cell - 1, 1), 22, fill=colour(p), stroke="none", tooltip=tip)
    worst = [p for p in shown[:3] if p.slow_by or p.score >= Z_OUTLIER]
    if worst:
        svg.text(20, y + 60, "worst: " + ", ".join(f"{p.meta.device} {p.meta.port}" for p in worst), 11)
    return y + 70


def fabric_png(svg_text: str, path: Path) -> None:
    """Rasterise the SVG to path (atomically). InputError when CairoSVG or its libcairo is missing."""
    import os

    from netfab.core.fs import output_error
    from netfab.core.validate import InputError

    try:
        import cairosvg  # type: ignore[import-untyped]  # ships no type information
    except (ImportError, OSError) as exc:
        raise InputError(
            f"--png needs CairoSVG and libcairo2 ({exc})", "pip install 'netfab[png]'; apt-get install libcairo2"
        ) from exc
    png = cairosvg.svg2png(bytestring=svg_text.encode("utf-8"))
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(png)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise output_error(path, exc) from None
