"""The SVG outputs are well-formed XML and escape whatever text they carry."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from analyze_helpers import example

from netfab.analyze import AnalyzeOptions, analyze
from netfab.analyze.plot_load import link_load_svg
from netfab.analyze.plot_topology import topology_svg
from netfab.analyze.svg import Svg

SVG_NS = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize("name", ["lab", "rail-4su", "clos3-24k"])
def test_plots_parse_as_svg(name: str) -> None:
    intent, plan = example(name)
    gpus = intent.topology.server_count * intent.topology.servers.gpus_per_server
    result = analyze(intent, plan, AnalyzeOptions(trials=50, job_gpus=min(128, gpus)))
    for text in (topology_svg(intent, result.capacity, plan.name), link_load_svg(result)):
        root = ET.fromstring(text)
        assert root.tag == f"{SVG_NS}svg"
        assert root.find(f"{SVG_NS}title") is not None
        assert len(root) > 10


def test_huge_fabric_is_drawn_as_groups() -> None:
    intent, plan = example("clos3-24k")
    result = analyze(intent, plan, AnalyzeOptions(trials=10, job_gpus=64))
    root = ET.fromstring(topology_svg(intent, result.capacity, plan.name))
    rects = root.findall(f"{SVG_NS}rect")
    # 1,692 switches and 3,072 servers, but a few hundred shapes: pods collapse past 6, tiers are blocks.
    assert len(rects) < 200
    texts = " ".join(t.text or "" for t in root.iter(f"{SVG_NS}text"))
    assert "more pods" in texts and "192 rack leaves" in texts and "7 superspines" in texts


def test_text_and_attributes_are_escaped() -> None:
    svg = Svg(100, 50, 'a<b & "c"')
    svg.text(1, 2, "<script>alert(1)</script> & co")
    svg.rect(0, 0, 10, 10, tooltip="x</title><script/>")
    root = ET.fromstring(svg.render())
    assert root.find(f"{SVG_NS}script") is None
    assert root.find(f"{SVG_NS}title").text == 'a<b & "c"'  # type: ignore[union-attr]
    assert [t.text for t in root.iter(f"{SVG_NS}text")] == ["<script>alert(1)</script> & co"]
