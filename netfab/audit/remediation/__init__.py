"""Remediation per platform kind: hier_config commands (EOS, NX-OS, Junos), a JSON Patch (SONiC), an NVUE
set/unset patch, and for FRR the intended frr.conf with frr-reload's diff plus the host script for the kernel.

Each module returns (the platform's own raw diff, {file name: text}); the files land in the device's audit dir.
`--remediate` does not apply these files: it sends the intended config through the deploy pipeline, and these
files are what a reviewer reads (or an operator pastes) when that is not wanted.
"""
