"""One FRR instance per switch: its private dirs, the boot script, and talking to its daemons.

No watchfrr or systemd: each switch's zebra/bgpd/staticd run as user frr with sockets, pidfiles and logs
in the switch's own run dir, inside the switch's network namespace and its own UTS namespace (so BGP peers
see the switch's hostname, not the VM's).
"""

from __future__ import annotations

import grp
import os
import pwd
import socket
import subprocess
import tempfile
from pathlib import Path

from netfab.lab.errors import LabError
from netfab.lab.layout import Layout
from netfab.lab.proc import in_netns, run
from netfab.lab.ssh import SSHD

FRR_LIB = Path("/usr/lib/frr")
FRR_RELOAD = FRR_LIB / "frr-reload.py"
FRR_USER = "frr"

# Runs as `sh -ec BOOT_SH boot <hostname> <switch dir> <sshd>` under `unshare --uts --mount` in the switch's
# netns, so every daemon and sshd share the switch's hostname and its /run/frr + /etc/frr bind mounts (plain
# `vtysh` and frr-reload.py over SSH then reach this switch). Static text: node data arrives as "$1".."$3".
# zebra first and alone: `-d` returns only once it is ready, and bgpd/staticd would otherwise retry a
# missing zserv socket on a timer. The config is loaded with `vtysh -b` (FRR's own per-daemon split, and a
# non-zero exit on a bad line) rather than `-f` on each daemon: with -f every daemon parses the whole file,
# and a top-level `exit` ending a block it does not know (e.g. `router bgp` in staticd) drops it out of
# config mode, so it silently ignores the rest (measured: staticd lost its `ip route` lines). Cost of -b:
# ~45 ms of vtysh per switch, and bgpd holds sessions ~1 s after the end of config (its post-config delay).
BOOT_SH = r"""
host=$1 d=$2
hostname "$host"
mount --bind "$d/run" /run/frr
mount --bind "$d/etc" /etc/frr
/usr/lib/frr/zebra -d -F datacenter -P 0 -f /dev/null -s 16777216 --vty_socket "$d/run" \
    -z "$d/run/zserv.api" -i "$d/run/zebra.pid" --log "file:$d/run/zebra.log"
/usr/lib/frr/bgpd -d -F datacenter -P 0 -f /dev/null --vty_socket "$d/run" \
    -z "$d/run/zserv.api" -i "$d/run/bgpd.pid" --log "file:$d/run/bgpd.log" &
bgpd=$!
/usr/lib/frr/staticd -d -F datacenter -P 0 -f /dev/null --vty_socket "$d/run" \
    -z "$d/run/zserv.api" -i "$d/run/staticd.pid" --log "file:$d/run/staticd.log" &
wait "$bgpd"
wait $!
vtysh -H /dev/null --vty_socket "$d/run" --config_dir "$d/etc" -b
# sshd runs commands through root's shell, and bash sources ~/.bashrc even for `ssh host cmd`; on these
# machines that is pyenv's init (~0.1-0.3 s), paid by every deploy/verify/audit command. Inside this
# switch's own mount namespace only, the file reads as empty.
if [ -f "$HOME/.bashrc" ]; then mount --bind /dev/null "$HOME/.bashrc"; fi
exec "$3" -f "$d/sshd_config" -E "$d/sshd.log"
"""


def frr_ids() -> tuple[int, int]:
    try:
        return pwd.getpwnam(FRR_USER).pw_uid, grp.getgrnam(FRR_USER).gr_gid
    except KeyError as exc:
        raise LabError("user 'frr' does not exist: install the frr package") from exc


def prepare_switch_dir(layout: Layout, switch: str, frr_conf: str) -> None:
    """Run and etc dirs owned by frr (daemons write pid locks and sockets there as frr)."""
    uid, gid = frr_ids()
    for d in (layout.switch_dir(switch), layout.run_dir(switch), layout.etc_dir(switch)):
        d.mkdir(parents=True, exist_ok=True)
    (layout.etc_dir(switch) / "frr.conf").write_text(frr_conf if frr_conf.endswith("\n") else frr_conf + "\n")
    # The hostname here names the switch in vtysh; integrated config makes frr-reload.py work on frr.conf.
    (layout.etc_dir(switch) / "vtysh.conf").write_text(f"service integrated-vtysh-config\nhostname {switch}\n")
    for d in (layout.run_dir(switch), layout.etc_dir(switch)):
        for path in (d, *d.iterdir()):
            os.chown(path, uid, gid)
        d.chmod(0o755)


def boot_argv(layout: Layout, switch: str) -> list[str]:
    return in_netns(
        layout.ns(switch),
        ["unshare", "--uts", "--mount", "sh", "-ec", BOOT_SH, "boot", switch, str(layout.switch_dir(switch)), SSHD],
    )


def vty(layout: Layout, switch: str, daemon: str, command: str, timeout: float = 5.0) -> str:
    """One command straight to a daemon's vty socket: the vtysh wire protocol without a vtysh process.

    Polling 40 switches through vtysh costs ~25 ms of CPU each; this costs well under 1 ms, which matters
    on a 2-core machine where the same CPUs are converging BGP. Reply: text, then 0 0 0 <status byte>.
    """
    path = layout.run_dir(switch) / f"{daemon}.vty"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
            sock.sendall(command.encode() + b"\0")
            buf = bytearray()
            while len(buf) < 4 or buf[-4:-1] != b"\0\0\0":
                chunk = sock.recv(65536)
                if not chunk:
                    raise LabError(f"{switch}: {daemon} closed its vty before answering {command!r}")
                buf += chunk
        except OSError as exc:
            raise LabError(f"{switch}: {daemon} does not answer on {path}: {exc}") from exc
    if buf[-1] != 0:
        raise LabError(f"{switch}: {daemon} rejected {command!r}: {bytes(buf[:-4]).decode().strip()}")
    return bytes(buf[:-4]).decode(errors="replace")


def vtysh(layout: Layout, switch: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    argv = ["vtysh", "-H", "/dev/null", "--vty_socket", str(layout.run_dir(switch))]
    argv += ["--config_dir", str(layout.etc_dir(switch)), *args]
    return run(argv, check=check, what=f"{switch}: vtysh")


def running_config(layout: Layout, switch: str) -> str:
    return vtysh(layout, switch, "-c", "show running-config").stdout


def reload(layout: Layout, switch: str, conf_text: str, dry_run: bool = False) -> str:
    """Apply (or with dry_run only diff) a whole new frr.conf via frr-reload.py; returns its report.

    An empty dry-run report means in sync. On success the new text becomes the switch's frr.conf,
    so a restart comes back with what is running.
    """
    etc, rundir = layout.etc_dir(switch), layout.run_dir(switch)
    with tempfile.NamedTemporaryFile("w", dir=layout.switch_dir(switch), suffix=".conf", delete=False) as fh:
        fh.write(conf_text if conf_text.endswith("\n") else conf_text + "\n")
        candidate = Path(fh.name)
    try:
        argv = [str(FRR_RELOAD), "--test" if dry_run else "--reload", "--stdout"]
        argv += ["--vty_socket", str(rundir), "--confdir", str(etc), "--rundir", str(rundir), str(candidate)]
        proc = run(argv, check=False, timeout=120)
        if proc.returncode != 0:
            detail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-8:]
            raise LabError(
                f"{switch}: frr-reload.py {'--test' if dry_run else '--reload'} failed: " + " / ".join(detail)
            )
        if not dry_run:
            uid, gid = frr_ids()
            os.chown(candidate, uid, gid)
            candidate.replace(etc / "frr.conf")
        return proc.stdout
    finally:
        candidate.unlink(missing_ok=True)
