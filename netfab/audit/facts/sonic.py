"""SONiC CONFIG_DB (config_db.json / `show runningconfiguration all`) -> facts.

Covered semantically: hostname, BGP ASN and neighbors (config_db's view; the FRR side comes from
`<name>.frr.conf` under the ``frr.`` prefix), ports (MTU, speed, description, admin state, cable length,
PFC priorities, addresses), DSCP -> TC, WRED/ECN profiles (Kmin, Kmax, Pmax, mode) and which queues use them,
schedulers, PFC watchdog (per port and polling), ECMP hash fields. Other leaves of the tables netfab renders
are catch-all facts; tables netfab does not render (FEATURE, CRM...) are the device's own.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from netfab.audit.facts.clitree import Emitted
from netfab.audit.facts.jsontree import JsonShape, PointerRule, Segments, as_int, prule
from netfab.audit.model import PRESENT, FactValue
from netfab.render.environment import platform_data

_DATA = platform_data("sonic")
_HASH_NAME = {v: k for k, v in _DATA["hash_fields"].items()}
_PORT_TABLES = {"PORT", "PFC_WD", "PORT_QOS_MAP", "INTERFACE", "QUEUE", "BUFFER_PG", "BUFFER_QUEUE"}


def _dscp_key(map_name: str, dscp: str) -> str:
    return f"dscp_map[{int(dscp)}]" if map_name == _DATA["map_name"] else f"dscp_map[{map_name}:{int(dscp)}]"


def _split(key: str) -> tuple[str, str]:
    port, _, rest = key.partition("|")
    return port, rest


def _pfc(value: Any) -> str:
    items = [int(p) for p in str(value).replace(" ", "").split(",") if p.isdigit()]
    return ",".join(str(p) for p in sorted(set(items)))


def _hash(value: Any) -> str:
    fields = value if isinstance(value, list) else str(value).split(",")
    return ",".join(sorted(_HASH_NAME.get(str(f), str(f).lower()) for f in fields))


def _port_field(field: str, fact: str, convert: Callable[[Any], FactValue] = str) -> PointerRule:
    return prule(
        f"/PORT/*/{field}", lambda c, v: [(f"interface[{c[0]}]", PRESENT), (f"interface[{c[0]}].{fact}", convert(v))]
    )


def _interface(c: tuple[str, ...], v: Any) -> Emitted:
    port, address = _split(c[0])
    return [(f"interface[{port}].address", address)] if address else [(f"interface[{port}].routed", True)]


def _queue(field: str, fact: str) -> PointerRule:
    def emit(c: tuple[str, ...], v: Any) -> Emitted:
        port, queue = _split(c[0])
        return [(f"interface[{port}].queue[{queue}].{fact}", str(v))]

    return prule(f"/QUEUE/*/{field}", emit)


RULES = (
    prule("/DEVICE_METADATA/localhost/hostname", lambda c, v: [("hostname", v)]),
    prule("/DEVICE_METADATA/localhost/bgp_asn", lambda c, v: [("bgp.asn", as_int(v))]),
    _port_field("mtu", "mtu", as_int),
    _port_field("speed", "speed_mbps", as_int),
    _port_field("description", "description"),
    _port_field("admin_status", "admin_status"),
    prule("/INTERFACE/*", _interface),
    prule("/LOOPBACK_INTERFACE/*", _interface),
    prule("/BGP_NEIGHBOR/*/asn", lambda c, v: [(f"bgp.neighbor[{c[0]}]", PRESENT),
                                               (f"bgp.neighbor[{c[0]}].remote_as", as_int(v))]),
    prule("/BGP_NEIGHBOR/*/name", lambda c, v: [(f"bgp.neighbor[{c[0]}].description", v)]),
    prule("/BGP_NEIGHBOR/*/local_addr", lambda c, v: [(f"bgp.neighbor[{c[0]}].local_address", v)]),
    prule("/BGP_NEIGHBOR/*/admin_status", lambda c, v: [(f"bgp.neighbor[{c[0]}].admin_status", v)]),
    prule("/DSCP_TO_TC_MAP/*/*", lambda c, v: [(_dscp_key(c[0], c[1]), as_int(v))]),
    prule("/PORT_QOS_MAP/*/pfc_enable", lambda c, v: [(f"interface[{c[0]}].pfc.priorities", _pfc(v))]),
    prule("/PFC_WD/GLOBAL/POLL_INTERVAL", lambda c, v: [("watchdog.polling_ms", as_int(v))]),
    prule("/PFC_WD/*/detection_time", lambda c, v: [(f"interface[{c[0]}].watchdog.detect_ms", as_int(v))]),
    prule("/PFC_WD/*/restoration_time", lambda c, v: [(f"interface[{c[0]}].watchdog.restore_ms", as_int(v))]),
    prule("/PFC_WD/*/action", lambda c, v: [(f"interface[{c[0]}].watchdog.action", v)]),
    prule("/WRED_PROFILE/*/green_min_threshold", lambda c, v: [(f"wred_profile[{c[0]}].ecn.kmin_bytes", as_int(v))]),
    prule("/WRED_PROFILE/*/green_max_threshold", lambda c, v: [(f"wred_profile[{c[0]}].ecn.kmax_bytes", as_int(v))]),
    prule("/WRED_PROFILE/*/green_drop_probability",
          lambda c, v: [(f"wred_profile[{c[0]}].ecn.pmax_percent", as_int(v))]),
    prule("/WRED_PROFILE/*/ecn", lambda c, v: [(f"wred_profile[{c[0]}].ecn.mode", v)]),
    _queue("wred_profile", "wred_profile"),
    _queue("scheduler", "scheduler"),
    prule("/SCHEDULER/*/type", lambda c, v: [(f"scheduler[{c[0]}].scheduling", str(v).lower())]),
    prule("/SCHEDULER/*/weight", lambda c, v: [(f"scheduler[{c[0]}].weight", as_int(v))]),
    prule("/SWITCH_HASH/GLOBAL/ecmp_hash", lambda c, v: [("hash.fields", _hash(v))]),
    prule("/CABLE_LENGTH/*/*", lambda c, v: [(f"interface[{c[1]}].cable_length", v)]),
)  # fmt: skip


def port_of(segs: Segments) -> str | None:
    if len(segs) >= 2 and segs[0] in _PORT_TABLES and segs[1] != "GLOBAL":
        return _split(segs[1])[0]
    if len(segs) >= 3 and segs[0] == "CABLE_LENGTH":
        return segs[2]
    return None


SHAPE = JsonShape(RULES, port_of)
SHARED_ROOTS: dict[str, int] = {}
"""config_db tables are owned whole: a table netfab renders is compared whole."""


def parse(text: str) -> Any:
    doc = json.loads(text)
    if not isinstance(doc, dict):
        raise ValueError("config_db is not a JSON object")
    return doc
