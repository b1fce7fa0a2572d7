"""cabling.csv: the plan a field technician cables from, one row per cable."""

from __future__ import annotations

import csv
import io

from netfab.design.plan import FabricPlan, LinkPlan

COLUMNS = ("a_device", "a_port", "b_device", "b_port", "tier", "rail", "speed", "cable_m", "a_address", "b_address")


def cabling_csv(plan: FabricPlan) -> str:
    return links_csv(plan.links)


def links_csv(links: list[LinkPlan]) -> str:
    """The cabling plan of these cables; nothing else goes into it (the build digests `links` alone)."""
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
