"""`netfab health --watch` and `--serve` without a lab: the watch loop over a fake fleet whose counters move
between reads (bounded by --samples, so the test ends), and the OpenMetrics server it publishes to, scraped
over HTTP on 127.0.0.1 and read back with prometheus_client's own parser. The same options against the real
lab are in test_health_lab.py."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from itertools import count

import pytest
from prometheus_client.parser import text_string_to_metric_families

from netfab.cli.health_cmd import _watch
from netfab.health.collect import Target
from netfab.health.fleet import Fleet, fleet_of
from netfab.health.openmetrics import MetricsServer
from tests.analyze_lab.labcheck_helpers import lab_plan
from tests.health.test_health_cli import _ip_link, _tc

SHAPED = ("leaf3", "swp2")


class MovingCounters:
    """Each read of a device is one second later for its counters: 1 GB/s each way, and the shaped port's tbf
    holding packets back 4,000 times a second."""

    def __init__(self, fleet: Fleet) -> None:
        self.ports = {t.device: sorted(p for d, p in fleet.ports if d == t.device) for t in fleet.targets}
        self.reads = {t.device: count() for t in fleet.targets}

    def run(self, target: Target) -> list[str]:
        k = next(self.reads[target.device])
        ports = self.ports[target.device]
        shaped = {SHAPED[1]: 4000} if target.device == SHAPED[0] else {}
        texts = {
            "ip_link": _ip_link(ports, k, {}),
            "tc_qdisc": _tc(ports, k, shaped),
            "nft_counters": json.dumps({"nftables": []}),
        }
        return [texts[c.source.id] for c in target.commands]


@pytest.fixture
def fleet() -> Fleet:
    return fleet_of(lab_plan(), include_hosts=False)


def _documents(text: str) -> list[dict[str, object]]:
    decoder, docs, at = json.JSONDecoder(), [], 0
    while text[at:].strip():
        at += len(text[at:]) - len(text[at:].lstrip())
        doc, at = decoder.raw_decode(text, at)
        docs.append(doc)
    return docs


def test_watch_reports_every_interval_until_its_sample_count(fleet: Fleet, capsys: pytest.CaptureFixture[str]) -> None:
    _watch(fleet, MovingCounters(fleet), 0.05, None, "json", None, None, 4, reports=3)
    docs = _documents(capsys.readouterr().out)
    assert len(docs) == 3
    for doc in docs:
        details = doc["details"]
        assert isinstance(details, dict) and details["samples"] == 2  # each report: the last two samples
        assert [(s["device"], s["port"]) for s in details["slow_links"]] == [SHAPED]


def test_serve_publishes_the_watched_report_on_loopback_as_openmetrics(fleet: Fleet) -> None:
    server = MetricsServer(0)  # any free port: tests must not fight over one
    try:
        assert server._server.server_address[0] == "127.0.0.1"
        url = f"http://127.0.0.1:{server.port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as before:
            assert before.read() == b"# EOF\n"  # nothing published yet: an empty, valid exposition
        _watch(fleet, MovingCounters(fleet), 0.05, None, "text", None, server, 4, reports=2)
        with urllib.request.urlopen(url, timeout=10) as resp:
            assert resp.headers["Content-Type"].startswith("application/openmetrics-text")
            body = resp.read().decode()
        families = {f.name: f for f in text_string_to_metric_families(body)}
        slow = {(s.labels["device"], s.labels["port"]): s.value for s in families["netfab_port_slow"].samples}
        assert slow[SHAPED] == 1.0 and sum(slow.values()) == 1.0
        labels = next(s.labels for s in families["netfab_port_slow"].samples if s.labels["device"] == SHAPED[0])
        assert {"tier", "rail", "pod", "plane", "role", "peer"} <= set(labels)
        with pytest.raises(urllib.error.HTTPError, match="404"):
            urllib.request.urlopen(f"http://127.0.0.1:{server.port}/other", timeout=10)
    finally:
        server.close()
