"""OpenMetrics (Prometheus) exposition of a health report: per-port gauges labelled with the fabric's own
coordinates (device, port, peer, tier, role, rail, pod, plane), so an existing dashboard can slice the tail by
rail or pod; plus the straggler odds and per-tier quantiles. `--serve PORT` answers GET /metrics on 127.0.0.1.

Values are the window's (rates per second, shares of the window, levels), not raw counters: the analysis already
took the deltas, so a scraper needs no rate() and sees exactly what the report judged.
"""

from __future__ import annotations

import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from netfab.health.analysis import HealthReport, PortHealth

CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"
_PORT_METRICS = (
    ("netfab_port_tail_score", "robust score against the port's peers (largest time-integral signal)", "score"),
    ("netfab_port_utilization_ratio", "transmit rate over link speed, averaged over the window", "util"),
    ("netfab_port_tx_bits_per_second", "transmit rate averaged over the window", "tx_bps"),
    ("netfab_port_peak_tx_bits_per_second", "highest transmit rate of one sampling interval", "peak_tx_bps"),
    ("netfab_port_busy_ratio", "share of sampling intervals with traffic", "busy"),
    ("netfab_port_pause_time_ratio", "largest share of the window the egress was paused (one priority)", "pause_share"),
    ("netfab_port_pause_rx_frames_per_second", "PFC pause frames received on lossless priorities", "pause_rx_rate"),
    ("netfab_port_shaper_overlimits_per_second", "times the port's shaper held packets back", "overlimit_rate"),
    ("netfab_port_queue_watermark_bytes", "peak queue or priority-group occupancy", "watermark"),
    ("netfab_port_ecn_marked_packets_window", "packets ECN-marked in the window", "ecn_marked"),
    ("netfab_port_errors_window", "errors (rx, tx, FCS) in the window", "errors"),
    ("netfab_port_lossless_drops_window", "drops on lossless queues in the window", "lossless_drops"),
    ("netfab_port_rx_power_dbm", "optics receive power, lowest lane", "rx_power"),
)  # fmt: skip


def _escape(value: str) -> str:
    if "\\" not in value and '"' not in value and "\n" not in value:
        return value  # the usual case: device and port names need no escaping
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(p: PortHealth) -> str:
    m = p.meta
    pairs = {
        "device": m.device,
        "port": m.port,
        "peer": f"{m.peer_device} {m.peer_port}",
        "tier": m.tier,
        "role": m.role,
        "rail": "" if m.rail is None else str(m.rail),
        "pod": "" if m.pod is None else str(m.pod),
        "plane": "" if m.plane is None else str(m.plane),
    }
    return ",".join(f'{k}="{_escape(v)}"' for k, v in pairs.items())


def exposition(report: HealthReport) -> str:
    lines: list[str] = []
    labels = [_labels(p) for p in report.ports]
    values = [p.values for p in report.ports]
    for name, help_text, field in _PORT_METRICS:
        lines += [f"# TYPE {name} gauge", f"# HELP {name} {help_text}"]
        for p, lab, vals in zip(report.ports, labels, values, strict=True):
            v = p.score if field == "score" else vals.get(field)
            if v is not None and math.isfinite(v):
                lines.append(f"{name}{{{lab}}} {float(v)!r}")
    lines += ["# TYPE netfab_port_slow gauge", "# HELP netfab_port_slow 1 when the port is named slow but up"]
    lines += [f"netfab_port_slow{{{lab}}} {1 if p.slow_by else 0}" for p, lab in zip(report.ports, labels, strict=True)]
    odds = report.straggler.get("p_slow_step", {})
    if isinstance(odds, dict) and odds:
        lines += [
            "# TYPE netfab_straggler_slow_step_ratio gauge",
            "# HELP netfab_straggler_slow_step_ratio P(a job's step is slow) = 1-(1-p)^N for a job of N GPUs",
        ]
        lines += [f'netfab_straggler_slow_step_ratio{{gpus="{n}"}} {float(v)!r}' for n, v in odds.items()]
    lines += ["# TYPE netfab_tier_tail_score gauge", "# HELP netfab_tier_tail_score tail score quantiles per tier"]
    for tier, table in report.tiers.items():
        for q, v in table["score"].items():
            if v is not None:
                lines.append(f'netfab_tier_tail_score{{tier="{_escape(tier)}",quantile="{q}"}} {float(v)!r}')
    lines += ["# TYPE netfab_devices_unreadable gauge", "# HELP netfab_devices_unreadable devices not read"]
    lines.append(f"netfab_devices_unreadable {len(report.unreadable)}")
    return "\n".join(lines) + "\n# EOF\n"


class MetricsServer:
    """GET /metrics on 127.0.0.1:port with the latest published report (loopback only, by design)."""

    def __init__(self, port: int) -> None:
        self._body = b"# EOF\n"
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # http.server's name
                if self.path.split("?")[0] != "/metrics":
                    self.send_error(404)
                    return
                body = owner._body
                self.send_response(200)
                self.send_header("Content-Type", CONTENT_TYPE)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return  # scrapes are not news

        try:
            self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        except OSError as exc:
            from netfab.core.validate import InputError

            raise InputError(f"--serve {port}: cannot listen on 127.0.0.1:{port}: {exc.strerror}") from exc
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def publish(self, report: HealthReport) -> None:
        self._body = exposition(report).encode()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
