"""Verify: prove on the devices that the fabric is what the plan says (sessions, ECMP, links, cabling)."""
