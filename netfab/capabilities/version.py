"""NOS release strings compared as numbers, whatever the vendor's spelling.

EOS "4.33.1F", NX-OS "10.5(1)F", Junos "23.4R2-S3" / "23.4X100-D40", Cumulus "5.12.0", SONiC "202411" all
reduce to the tuple of their digit runs: (4, 33, 1), (10, 5, 1), (23, 4, 2, 3), (23, 4, 100, 40), (5, 12, 0),
(202411,). Letters only separate numbers: EOS F/M trains and Junos R/S releases of one number are the same
code line for feature availability, and a maintenance suffix (-S3, .1) sorts after its base release.
"""

from __future__ import annotations

import re
from functools import total_ordering

_DIGITS = re.compile(r"\d+")


@total_ordering
class NosVersion:
    __slots__ = ("parts", "text")

    def __init__(self, text: str) -> None:
        parts = tuple(int(d) for d in _DIGITS.findall(text))
        if not parts:
            raise ValueError(f"version {text!r} contains no number")
        self.text = text
        self.parts = parts

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NosVersion) and self.parts == other.parts

    def __lt__(self, other: NosVersion) -> bool:
        # (4, 33) < (4, 33, 1): a release without a maintenance number is the first of its line.
        return self.parts < other.parts

    def __hash__(self) -> int:
        return hash(self.parts)

    def __repr__(self) -> str:
        return f"NosVersion({self.text!r})"


def parse_version(text: str | None) -> NosVersion | None:
    """None for a missing or unreadable version: the caller treats that as 'the newest release'."""
    if text is None:
        return None
    try:
        return NosVersion(str(text))
    except ValueError:
        return None


def at_least(version: str | None, since: str) -> bool:
    """Does `version` include a feature that appeared in `since`? An unknown version is assumed current."""
    current = parse_version(version)
    return current is None or current >= NosVersion(since)
