"""cabling.csv: the plan a field technician cables from, one row per cable."""

from __future__ import annotations

import csv
import io

from netfab.design.plan import FabricPlan, LinkPlan

COLUMNS = ("a_device", "a_port", "b_device", "b_port", "tier", "rail", "speed", "cable_m", "a_address", "b_address")


def cabling_csv(plan: FabricPlan) -> str:
    return links_csv(plan.links)


def links_csv(links: list[LinkPlan]) -> str:
    """The cabling plan of these cables, as the csv module writes it (minimal quoting, "\\n" line ends).

    At 100k GPUs that is 210,944 rows (21 MB): csv.writer took 0.55 s, most of it converting and checking each
    of 2.1 million fields one by one. Rows are joined here instead, and the whole text checked once: only a
    field holding a delimiter, a quote or a line break would need quoting, and then that text has more commas
    (or a quote, or more line breaks) than its rows and columns account for; then the csv module writes it."""
    header = ",".join(COLUMNS)
    rows = [
        f"{link.a_device},{link.a_port},{link.b_device},{link.b_port},{link.tier},"
        f"{'' if link.rail is None else link.rail},{link.speed_gbps}G,{link.cable_m:g},"
        f"{link.a_address or ''},{link.b_address or ''}"
        for link in links
    ]
    text = "\n".join((header, *rows, ""))
    if (
        text.count(",") == (len(COLUMNS) - 1) * (len(rows) + 1)
        and text.count("\n") == len(rows) + 1
        and '"' not in text
        and "\r" not in text
    ):
        return text
    return _quoted_csv(links)


def _quoted_csv(links: list[LinkPlan]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for link in links:
        writer.writerow(
            (
                link.a_device,
                link.a_port,
                link.b_device,
                link.b_port,
                link.tier,
                "" if link.rail is None else link.rail,
                f"{link.speed_gbps}G",
                f"{link.cable_m:g}",
                link.a_address or "",
                link.b_address or "",
            )
        )
    return buf.getvalue()
