"""The Python helpers templates call give what the Jinja filters they replace give."""

from __future__ import annotations

import jinja2.compiler

from netfab.design.plan import bgp_neighbor
from netfab.render.environment import new_environment, peer_groups


def test_peer_groups_is_map_unique_sort() -> None:
    names = ["SPINES", "leaves", "spines", "Leaves", "spines", "SUPER", "leaves", "super", "SPINES"]
    neighbors = [bgp_neighbor(f"Ethernet{n}", f"peer{n}", 65000 + n, None, g) for n, g in enumerate(names)]
    env = new_environment(jinja2.compiler.CodeGenerator)
    text = env.from_string("{{ ns | map(attribute='peer_group') | unique | sort | join(',') }}").render(ns=neighbors)
    assert ",".join(peer_groups(neighbors)) == text == "leaves,SPINES,SUPER"
