"""What changed between two builds of a fabric: per file and per device, with each switch config's change
reduced to facts and grouped across the fleet exactly as the audit groups drift (netfab.audit.group).

Used by `netfab build` (its closing summary against the previous build) and `netfab diff` (two intents,
nothing written)."""
