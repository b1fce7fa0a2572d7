"""Documented exit codes. Scripts and CI gate on these, so they never change meaning."""

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0  # clean: no errors (warnings allowed unless --strict), in sync, checks passed
    FINDINGS = 1  # lint errors, drift found, or failed checks
    USAGE = 2  # bad usage or unreadable input (missing file, YAML that cannot be parsed)
    INTERNAL = 3  # a bug in netfab or an environment failure it could not recover from
