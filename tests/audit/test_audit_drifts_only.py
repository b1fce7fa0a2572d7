"""audit_texts(remediate=False), which a build's "what changed" summary uses: the same drifts as the full audit,
and no remediation or raw diff computed (the fix is most of the cost on a large config)."""

from __future__ import annotations

import pytest
from audit_helpers import intended

from netfab.audit.device import audit_texts
from netfab.audit.model import Collected, DeviceAudit
from netfab.audit.rules import AuditRules

# A drift each kind of part can show: an indented CLI line, and a value in SONiC's config_db JSON.
DRIFTED = {
    ("arista_eos", ".cfg"): ("   mtu 9214\n", "   mtu 1500\n"),
    ("sonic", ".json"): ('"mtu": "9216"', '"mtu": "1500"'),
}


@pytest.mark.parametrize(("platform", "suffix"), sorted(DRIFTED))
def test_drifts_only_finds_the_same_drifts_and_no_fix(platform: str, suffix: str) -> None:
    want = intended(platform)
    old, new = DRIFTED[(platform, suffix)]
    assert old in want[suffix]
    running = {**want, suffix: want[suffix].replace(old, new, 1)}

    def audit(remediate: bool) -> DeviceAudit:
        return audit_texts("leaf1", platform, want, Collected("leaf1", files=running), AuditRules(), remediate)

    full, drifts_only = audit(True), audit(False)
    assert full.drifts and drifts_only.drifts == full.drifts
    assert full.remediation and full.raw  # the full audit does fix what it found
    assert not drifts_only.remediation and not drifts_only.raw
    assert drifts_only.status == full.status == "drift"
