"""Names and paths of one lab's kernel objects and files, derived from its prefix and workdir only.

Everything a later `down` must find is derivable here, so a crashed run can be swept without its spec.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from netfab.lab.spec import IFNAME_MAX

# Under /var/tmp rather than pytest's 0700 tmp dirs: FRR daemons run as user frr and must reach their run dir.
DEFAULT_ROOT = Path("/var/tmp/netfab-lab")
DAEMONS = ("zebra", "bgpd", "staticd")


def default_workdir(prefix: str) -> Path:
    return DEFAULT_ROOT / prefix


def pointer_file(prefix: str) -> Path:
    """Where a lab with a non-default workdir records it, so `down(prefix)` finds it after a crash."""
    return DEFAULT_ROOT / f"{prefix}.workdir"


def owns_ifname(prefix: str, ifname: str) -> bool:
    """Whether a root-namespace interface belongs to the lab with this prefix (readable or hashed form)."""
    return ifname.startswith((f"{prefix}-", f"{prefix}_"))


@dataclass(frozen=True, slots=True)
class Layout:
    prefix: str
    workdir: Path

    def ns(self, node: str) -> str:
        return f"{self.prefix}-{node}"

    @property
    def bridge(self) -> str:
        return f"{self.prefix}-mgmt"

    def mgmt_veth(self, switch: str) -> str:
        """Root-side end of a switch's mgmt0: `<prefix>-<switch>` when it fits, else `<prefix>_<hash>`.

        The hashed form uses '_' after the prefix so it can never equal a readable name of another switch.
        """
        readable = f"{self.prefix}-{switch}"
        if len(readable) <= IFNAME_MAX and readable != self.bridge:
            return readable
        room = IFNAME_MAX - len(self.prefix) - 1
        return f"{self.prefix}_{hashlib.sha256(switch.encode()).hexdigest()[:room]}"

    @property
    def link_group(self) -> int:
        """A device group for the lab's root-side links: `ip link del group` removes them all in one batch
        (one RCU grace period instead of ~30 ms per veth). Never 0, the group every other link is in."""
        return 1 + int(hashlib.sha256(self.prefix.encode()).hexdigest()[:8], 16) % 0x7FFFFFFE

    @property
    def marker(self) -> Path:
        """Written first into a workdir the lab creates; teardown deletes only a workdir that has it."""
        return self.workdir / ".netfab-lab"

    @property
    def state_file(self) -> Path:
        return self.workdir / "state.json"

    def switch_dir(self, switch: str) -> Path:
        return self.workdir / "switches" / switch

    def run_dir(self, switch: str) -> Path:
        return self.switch_dir(switch) / "run"

    def etc_dir(self, switch: str) -> Path:
        return self.switch_dir(switch) / "etc"

    def pidfile(self, switch: str, daemon: str) -> Path:
        return self.run_dir(switch) / f"{daemon}.pid"

    @property
    def ssh_dir(self) -> Path:
        return self.workdir / "ssh"

    @property
    def client_key(self) -> Path:
        return self.ssh_dir / "id_ed25519"

    @property
    def authorized_keys(self) -> Path:
        return self.ssh_dir / "authorized_keys"

    @property
    def known_hosts(self) -> Path:
        return self.ssh_dir / "known_hosts"

    @property
    def ssh_config(self) -> Path:
        return self.ssh_dir / "ssh_config"

    def host_key(self, switch: str) -> Path:
        return self.switch_dir(switch) / "ssh_host_ed25519_key"

    def sshd_config(self, switch: str) -> Path:
        return self.switch_dir(switch) / "sshd_config"
