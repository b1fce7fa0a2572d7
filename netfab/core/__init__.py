"""Types shared by every pipeline stage: source locations, findings, exit codes, package data paths."""
