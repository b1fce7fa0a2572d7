"""JUnit XML: one test case per device, failing when it drifted or could not be audited, so a CI dashboard
shows the whole fleet with the drifted devices red."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from netfab.audit import describe
from netfab.audit.model import AuditReport

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str) -> str:
    return _XML_INVALID.sub("?", text)


def render_junit(report: AuditReport) -> str:
    suite = ET.Element("testsuite", name=f"netfab.audit.{report.fabric}")
    failures = errors = 0
    for dev in sorted(report.devices, key=lambda d: d.device):
        case = ET.SubElement(suite, "testcase", name=dev.device, classname=f"netfab.audit.{dev.platform}")
        if dev.status == "unreadable":
            errors += 1
            err = ET.SubElement(case, "error", type="unreadable", message=_clean(dev.error or "not audited"))
            err.text = _clean(dev.error or "")
        elif dev.drifts:
            failures += 1
            labels = sorted({describe.label(d.path) for d in dev.drifts})
            failure = ET.SubElement(
                case, "failure", type="drift", message=_clean(f"{len(dev.drifts)} drifted: {', '.join(labels[:5])}")
            )
            failure.text = _clean(
                "\n".join(
                    f"{d.path}: {describe.value(d.path, d.actual)} (intent: {describe.value(d.path, d.intended)})"
                    for d in dev.drifts
                )
            )
        if dev.notes:
            ET.SubElement(case, "system-out").text = _clean("\n".join(dev.notes))
    suite.set("tests", str(len(report.devices)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("time", f"{report.seconds:.3f}")
    ET.indent(suite)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
