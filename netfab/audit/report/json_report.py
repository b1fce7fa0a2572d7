"""The audit record: everything the audit knows, keyed by name (never by list position).

It is the `details` of the audit's JSON envelope (netfab.report.json_report), beside the shared summary and
findings; its own `summary` keeps the fleet counts (devices, in sync, drifted, unreadable, groups).
"""

from __future__ import annotations

from typing import Any

from netfab.audit import describe
from netfab.audit.group import device_index, group_details, notes_by_text, sentence
from netfab.audit.model import AuditReport


def summary(report: AuditReport) -> dict[str, int]:
    return {
        "devices": len(report.devices),
        "in_sync": sum(d.status == "in_sync" for d in report.devices),
        "drift": len(report.drifted),
        "unreadable": len(report.unreadable),
        "findings": sum(len(d.drifts) for d in report.devices),
        "groups": len(report.groups),
    }


def as_dict(report: AuditReport) -> dict[str, Any]:
    by_device = device_index(report.devices)
    groups = []
    for g in report.groups:
        details = group_details(g, by_device)
        groups.append(
            {
                "kind": g.kind,
                "label": describe.label(g.kind),
                "message": sentence(g, report.meta, details),
                "actual": g.actual,
                "intended": g.intended,
                "devices": g.devices,
                "members": [{"device": d, "path": p} for d, p in g.members],
            }
        )
    devices: dict[str, Any] = {}
    for dev in sorted(report.devices, key=lambda d: d.device):
        meta = report.meta.get(dev.device)
        devices[dev.device] = {
            "platform": dev.platform,
            "role": meta.role if meta else None,
            "rail": meta.rail if meta else None,
            "pod": meta.pod if meta else None,
            "status": dev.status,
            "origin": dev.origin,
            "error": dev.error,
            "notes": dev.notes,
            "drift": [
                {
                    "path": d.path,
                    "label": describe.label(d.path),
                    "actual": d.actual,
                    "intended": d.intended,
                    "detail": list(d.detail),
                }
                for d in dev.drifts
            ],
            "raw": [{"kind": r.kind, "text": r.text, **({"ops": r.ops} if r.ops else {})} for r in dev.raw],
            "remediation": sorted(dev.remediation),
        }
    return {
        "fabric": report.fabric,
        "source": report.source,
        "seconds": round(report.seconds, 3),
        "audit_dir": report.out_dir,
        "summary": summary(report),
        "groups": groups,
        "notes": [{"note": n, "devices": ds} for n, ds in notes_by_text(report.devices)],
        "devices": devices,
        "remediation": report.remediation_outcome,
    }
