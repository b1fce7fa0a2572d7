"""`netfab audit`: running vs intended, as structure rather than text.

collect (devices over Nornir, or saved files) -> facts/<platform> (running AND intended configs parsed into
facts in the DevicePlan's terms) -> compare (defaults filled, containers folded) -> group (one finding per
kind of drift across the fleet) -> remediation/<kind> (hier_config, JSON Patch, NVUE set/unset, frr-reload +
host script) -> report (text, json, junit, sarif, markdown) and the audit dir; apply sends drifted devices
through the staged deploy (--remediate).
"""
