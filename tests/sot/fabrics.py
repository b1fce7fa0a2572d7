"""Test fabrics that can share one NetBox: each under its own name (its own site) and its own address pools,
since NetBox keeps one global table of prefixes and addresses (ENFORCE_GLOBAL_UNIQUE) and netfab never takes
over another fabric's addresses."""

from __future__ import annotations

from pathlib import Path

import yaml


def relocated(src: Path, name: str, n: int, out_dir: Path, mgmt_prefixlen: int = 24) -> Path:
    """`src` as fabric `name` with pools numbered `n` (2..99): management 127.77.n.0/len, loopbacks and /31s
    in 10.n.0.0/16, GPU NICs in 10.(100+n).0.0/16."""
    data = yaml.safe_load(src.read_text(encoding="utf-8"))
    data["fabric"]["name"] = name
    data.setdefault("management", {})["subnet"] = f"127.77.{n}.0/{mgmt_prefixlen}"
    underlay = data.setdefault("underlay", {})
    underlay["loopbacks"] = {"superspine": f"10.{n}.0.0/24", "spine": f"10.{n}.1.0/24", "leaf": f"10.{n}.16.0/20"}
    underlay["p2p"] = {"leaf_spine": f"10.{n}.128.0/18", "spine_superspine": f"10.{n}.192.0/19"}
    underlay["hosts"] = f"10.{100 + n}.0.0/16"
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{name}.yaml"
    out.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return out
