"""A few SVG primitives, written by hand: the plots are boxes, lines, bars and text, which needs no library.

Every piece of text and every attribute value is escaped, because device and fabric names end up in labels.
Numbers are rounded to 0.1 px so the files stay small and byte-identical across runs.
"""

from __future__ import annotations

FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f")


def escape(data: str) -> str:
    """&, < and > as entities: xml.sax.saxutils.escape, which imports urllib.request and ssl (~30 ms)."""
    return data.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;")


def quoteattr(data: str) -> str:
    """An attribute value escaped and quoted, as xml.sax.saxutils.quoteattr writes it."""
    data = escape(data).replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;")
    if '"' not in data:
        return f'"{data}"'
    if "'" not in data:
        return f"'{data}'"
    return '"' + data.replace('"', "&quot;") + '"'


def _n(v: float) -> str:
    r = round(v, 1)
    return str(int(r)) if r == int(r) else str(r)


class Svg:
    def __init__(self, width: float, height: float, title: str) -> None:
        self.width = width
        self.height = height
        self.parts: list[str] = [f"<title>{escape(title)}</title>"]
        self.rect(0, 0, width, height, fill="#ffffff", stroke="none")

    def _el(self, tag: str, attrs: dict[str, str | float | None], body: str | None = None) -> None:
        text = " ".join(
            f"{k.replace('_', '-')}={quoteattr(_n(v) if isinstance(v, int | float) else v)}"
            for k, v in attrs.items()
            if v is not None
        )
        self.parts.append(f"<{tag} {text}/>" if body is None else f"<{tag} {text}>{body}</{tag}>")

    def rect(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        fill: str = "none",
        stroke: str = "#333333",
        rx: float = 0,
        tooltip: str | None = None,
        stroke_width: float = 1,
    ) -> None:
        attrs: dict[str, str | float | None] = {
            "x": x, "y": y, "width": max(w, 0), "height": max(h, 0), "fill": fill, "stroke": stroke,
            "rx": rx or None, "stroke_width": stroke_width if stroke != "none" else None,
        }  # fmt: skip
        self._el("rect", attrs, f"<title>{escape(tooltip)}</title>" if tooltip else None)

    def line(
        self,
        x1: float,
        y1: float,
        x2: float,
        y2: float,
        stroke: str = "#333333",
        width: float = 1,
        dash: str | None = None,
    ) -> None:
        self._el("line", {"x1": x1, "y1": y1, "x2": x2, "y2": y2, "stroke": stroke, "stroke_width": width,
                          "stroke_dasharray": dash})  # fmt: skip

    def polyline(self, points: list[tuple[float, float]], stroke: str, width: float = 1.5) -> None:
        pts = " ".join(f"{_n(x)},{_n(y)}" for x, y in points)
        self._el("polyline", {"points": pts, "fill": "none", "stroke": stroke, "stroke_width": width})

    def circle(self, x: float, y: float, r: float, fill: str) -> None:
        self._el("circle", {"cx": x, "cy": y, "r": r, "fill": fill, "stroke": "#ffffff", "stroke_width": 1})

    def text(
        self,
        x: float,
        y: float,
        content: str,
        size: float = 12,
        anchor: str = "start",
        weight: str | None = None,
        fill: str = "#222222",
        rotate: float | None = None,
    ) -> None:
        attrs: dict[str, str | float | None] = {
            "x": x, "y": y, "font_size": size, "text_anchor": anchor, "font_weight": weight, "fill": fill,
            "font_family": FONT, "transform": f"rotate({_n(rotate)} {_n(x)} {_n(y)})" if rotate else None,
        }  # fmt: skip
        self._el("text", attrs, escape(content))

    def render(self) -> str:
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(self.width)}" height="{_n(self.height)}" '
            f'viewBox="0 0 {_n(self.width)} {_n(self.height)}">'
        )
        return "\n".join([head, *self.parts, "</svg>"]) + "\n"
