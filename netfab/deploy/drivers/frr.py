"""NAPALM driver for Linux + FRR (netfab's namespace lab and whitebox Linux switches), over SSH.

Config cycle (LAB.md facts): the candidate is a whole frr.conf; `frr-reload.py --test` gives the diff (an
empty diff means in sync; text diffs lie because FRR reorders sections) and `--reload` applies it. A syntax
error is refused before anything changes, but an error seen only while applying can leave the router
half-applied, so every commit first saves the running config on the device and restores it on failure.

Commit-confirm: FRR has no timer, so `commit_config(revert_in=N)` arms a detached timer ON THE DEVICE
(timer.py) that reloads the saved config unless confirmed: the revert happens even if the deploy dies.

Extra (non-NAPALM) API, for the Linux half of the frr platform's build (`<name>.sh`: hash sysctls, ECN
queueing):
  load_host_script(text)   stage the script; compare_config() shows its diff against the last applied one;
                           commit_config() runs it after FRR; rollback()/the timer re-run the previous script.
  load_companions({...})   the same, keyed by build file name ("leaf1.sh").
  get_route_ecmp_width(prefixes=None) -> {prefix: installed next-hop count}
Host scripts must be idempotent and absolute (set every value, flush-and-recreate their own nft table):
rolling back means re-running the previous script. The first script ever applied has no predecessor, so a
rollback of that commit restores FRR only (logged).

get_lldp_neighbors(): lldpd's `lldpctl -f json0` when lldpd runs; {} when it does not (the lab has no LLDP:
cabling there is checked from BGP unnumbered peers, which are keyed by interface name).

optional_args (besides those of base.SSHDriverBase): vtysh (default "vtysh"), frr_reload (default
/usr/lib/frr/frr-reload.py), vty_socket, frr_confdir, frr_rundir, frr_bindir (passed to vtysh/frr-reload only
when set; the lab bind-mounts each switch's dirs on /etc/frr and /run/frr instead), host_script_env (a mapping
of environment variables for the host script, e.g. the lab's NETFAB_SHAPE_MBIT).
"""

from __future__ import annotations

import logging
import shlex
from typing import Any, ClassVar

from napalm.base import models
from napalm.base.exceptions import CommandErrorException, CommitError, ReplaceConfigException

from netfab.deploy import kernel_state
from netfab.deploy.drivers import base as _base
from netfab.deploy.drivers import parsers, timer
from netfab.deploy.drivers.protocol import QosState

log = logging.getLogger(__name__)

CANDIDATE = "candidate.conf"
ROLLBACK = "rollback.conf"  # running config saved by the last commit: what rollback() and the timer restore
HOST_APPLIED = "host.sh"  # the host script last applied
HOST_CANDIDATE = "host.candidate.sh"
HOST_ROLLBACK = "host.rollback.sh"  # the script the last commit replaced (absent: that commit left the host alone)
_RESTORE_MARK = "netfab-restore"


class FRRDriver(_base.SSHDriverBase):
    platform = "frr"
    extra_artifacts: ClassVar[dict[str, str]] = {".sh": "load_host_script"}

    def __init__(
        self,
        hostname: str,
        username: str,
        password: str,
        timeout: int = 60,
        optional_args: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(hostname, username, password, timeout, optional_args)
        o = self.optional_args
        vty = ["--vty_socket", str(o["vty_socket"])] if o.get("vty_socket") else []
        conf = str(o["frr_confdir"]) if o.get("frr_confdir") else None
        self._vtysh += ["--config_dir", conf] if conf else []
        self._reload = [
            str(o.get("frr_reload", "/usr/lib/frr/frr-reload.py")),
            "--stdout",  # log to the channel, never to /var/log/frr
            *vty,
            *(["--confdir", conf] if conf else []),
            *(["--rundir", str(o["frr_rundir"])] if o.get("frr_rundir") else []),
            *(["--bindir", str(o["frr_bindir"])] if o.get("frr_bindir") else []),
        ]
        self._confdir = conf or "/etc/frr"
        # Environment for the host script (e.g. the lab's NETFAB_SHAPE_MBIT / ECN_MODE); it runs as root.
        env = {str(k): str(v) for k, v in dict(o.get("host_script_env") or {}).items()}
        self._host_sh = self._priv(shlex.join(["env", *(f"{k}={v}" for k, v in sorted(env.items())), "sh"]))
        self._host_candidate: str | None = None

    # --- command builders -------------------------------------------------------------------------------
    def _reload_cmd(self, mode: str, path: str) -> str:
        return self._priv(shlex.join(["env", _base.VTYSH_NO_HISTORY, self._reload[0], mode, *self._reload[1:], path]))

    # --- candidate --------------------------------------------------------------------------------------
    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        text = self._text_from(filename, config)
        if not text.strip():
            raise ReplaceConfigException(f"{self.hostname}: empty candidate (frr-reload refuses empty files)")
        path = self._upload(CANDIDATE, text)
        # vtysh's dry-run parses with the daemons' grammar: a syntax error fails here, before any change
        res = self._run(self._vtysh_cmd("-C", "-f", path), check=False)
        if res.rc != 0:
            self._run(f"rm -f {shlex.quote(path)}", check=False)
            raise ReplaceConfigException(f"{self.hostname}: FRR rejected the candidate:\n{_base.redact(res.output)}")
        self._candidate = text

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        raise NotImplementedError("frr: netfab renders whole configs; use load_replace_candidate")

    def load_host_script(self, text: str) -> None:
        """Stage the Linux-side script (`<name>.sh`); applied by commit_config() after FRR."""
        self._upload(HOST_CANDIDATE, text)
        self._host_candidate = text

    def compare_config(self) -> str:
        parts: list[str] = []
        if self._candidate is not None:
            diff = self._frr_diff(self._path(CANDIDATE))
            if diff:
                parts.append(diff)
        if self._host_candidate is not None:
            host = self._run(
                f"cd {shlex.quote(self.workdir)} && {{ [ -f {HOST_APPLIED} ] && f={HOST_APPLIED} || f=/dev/null; }}; "
                f"diff -u $f {HOST_CANDIDATE}",
                check=False,
            )
            if host.rc > 1:
                raise CommandErrorException(f"{self.hostname}: host script diff failed: {host.output}")
            if host.stdout.strip():
                parts.append("# host script (" + HOST_APPLIED + ")\n" + host.stdout.strip())
        return _base.redact("\n\n".join(parts))

    def _frr_diff(self, path: str) -> str:
        """frr-reload's view of running vs `path`; "" when in sync. Raises if frr-reload cannot judge.

        Its rc matters: with a file it cannot parse, --test still prints a diff (as if the file were empty)
        but exits 1 - that diff must never be mistaken for the truth.
        """
        res = self._run(self._reload_cmd("--test", path), check=False)
        if res.rc != 0:
            raise CommandErrorException(
                f"{self.hostname}: frr-reload --test failed (rc={res.rc}): "
                f"{_errors(res.stdout, res.stderr) or res.output[-800:]}"
            )
        return res.stdout.strip()

    def discard_config(self) -> None:
        self._run(f"cd {shlex.quote(self.workdir)} && rm -f {CANDIDATE} {HOST_CANDIDATE}", check=False, what="discard")
        self._candidate = None
        self._host_candidate = None

    # --- commit / confirm / rollback ------------------------------------------------------------------
    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        if self._candidate is None and self._host_candidate is None:
            raise CommitError(f"{self.hostname}: nothing to commit (load a candidate first)")
        if revert_in is not None and int(revert_in) < 1:
            raise CommitError(f"{self.hostname}: revert_in must be a positive number of seconds")
        state = self._timer_state()
        if state in (timer.TimerState.PENDING, timer.TimerState.RUNNING):
            raise CommitError(
                f"{self.hostname}: the previous commit is still {state.value} (unconfirmed); "
                "confirm_commit() or rollback() it first"
            )
        # 1. Save what runs now: the timer, rollback() and the failure path all restore exactly this.
        self._upload(ROLLBACK, self._running_config(full=False))
        wd = shlex.quote(self.workdir)
        if self._host_candidate is not None:
            self._run(
                f"cd {wd} && rm -f {HOST_ROLLBACK} && "
                f"{{ [ ! -f {HOST_APPLIED} ] || cp -p {HOST_APPLIED} {HOST_ROLLBACK}; }}",
                what="save the host script",
            )
            if self._run(f"test -f {shlex.quote(self._path(HOST_ROLLBACK))}", check=False).rc != 0:
                log.warning("%s: first host script: a rollback cannot undo its kernel settings", self.hostname)
        else:
            self._run(f"rm -f {shlex.quote(self._path(HOST_ROLLBACK))}", what="reset host rollback")
        self._run(timer.clear_command(self.workdir), check=False)
        # 2. Arm the timer BEFORE changing anything: a deploy that dies mid-apply is still reverted.
        if revert_in is not None:
            self._arm_timer(int(revert_in), self._restore_snippet())
        # 3. Apply FRR, then the host script; any failure restores both and raises.
        if self._candidate is not None:
            res = self._run(self._reload_cmd("--reload", self._path(CANDIDATE)), check=False, timeout=300)
            if res.rc != 0:
                self._fail_and_restore("FRR failed while applying the candidate", res)
        if self._host_candidate is not None:
            res = self._run(
                f"cd {wd} && {self._host_sh} {HOST_CANDIDATE} && mv -f {HOST_CANDIDATE} {HOST_APPLIED}",
                check=False,
                timeout=300,
            )
            if res.rc != 0:
                self._fail_and_restore("the host script failed", res)
        if message:
            line = shlex.quote(" ".join(message.split())[:500])
            self._run(f'echo "$(date -u +%FT%TZ) "{line} >> {shlex.quote(self._path("history.log"))}', check=False)
        self._candidate = None
        self._host_candidate = None

    def _restore_snippet(self) -> str:
        """Shell run in the work dir by the timer (and so by rollback()): reload the saved FRR config, then the
        previous host script. Its last line says which half failed, so a failing host script is never
        reported as an FRR difference (RELIABILITY_TRIAL.md F3-C)."""
        frr = self._reload_cmd("--reload", self._path(ROLLBACK))
        return (
            f"{frr}; frc=$?; hrc=0; "
            f"if [ -f {HOST_ROLLBACK} ]; then {self._host_sh} {HOST_ROLLBACK} && mv -f {HOST_ROLLBACK} {HOST_APPLIED} "
            "|| hrc=1; fi; "
            f'echo "{_RESTORE_MARK} frr=$frc host=$hrc"; [ $frc -eq 0 ] && [ $hrc -eq 0 ]'
        )

    def _restore(self) -> tuple[bool, str]:
        """Put the saved config back, as a device-side revert; (fully restored?, what is not, in words)."""
        rc, log = self._revert_now(self._restore_snippet())
        mark = next((line for line in reversed(log.splitlines()) if line.startswith(_RESTORE_MARK)), "")
        host_failed = "host=1" in mark
        try:
            residue = self._frr_diff(self._path(ROLLBACK))
        except CommandErrorException as exc:
            return False, f"cannot tell whether FRR is restored: {exc}"
        problems = []
        if residue:
            problems.append(
                f"FRR still differs from the saved config ({self._path(ROLLBACK)}):\n{_base.redact(residue)}"
            )
        if host_failed:
            problems.append(
                "FRR is restored, but re-running the previous host script failed, so the kernel side (ECN, MTU, "
                f"hash) may differ from before: {_base.redact(_errors(log) or log[-800:])}"
            )
        if not problems and rc != 0:
            problems.append(f"the restore exited {rc}: {_base.redact(_errors(log) or log[-800:])}")
        return not problems, "\n".join(problems)

    def _fail_and_restore(self, reason: str, res: Any) -> None:
        errors = _base.redact(_errors(res.stdout, res.stderr) or res.output[-1500:])
        # Fires the armed timer (or a fresh one): the restore finishes on the device even if we die now.
        ok, problem = self._restore()
        self._candidate = None
        self._host_candidate = None
        if ok:
            raise CommitError(
                f"{self.hostname}: {reason} (rc={res.rc}): {errors}\n"
                f"Restored the previous config: frr-reload --test against the saved copy "
                f"({self._path(ROLLBACK)}) is empty."
            )
        raise CommitError(f"{self.hostname}: {reason} (rc={res.rc}): {errors}\nRESTORE INCOMPLETE: {problem}")

    def confirm_commit(self) -> None:
        self._confirm_with_timer()

    def rollback(self) -> None:
        """Revert the last commit by firing its timer (never cancel-then-restore: see timer.py), wait for the
        device to finish, and prove FRR equals the saved config."""
        if self._run(f"test -f {shlex.quote(self._path(ROLLBACK))}", check=False).rc != 0:
            raise CommandErrorException(f"{self.hostname}: nothing to roll back to (no commit was made by netfab)")
        ok, problem = self._restore()
        if not ok:
            raise CommandErrorException(f"{self.hostname}: rollback did not converge: {problem}")
        self._run(timer.clear_command(self.workdir), check=False)

    def get_applied_companions(self) -> dict[str, str]:
        """netfab extra: {"host.sh": the host script this driver last applied}; {} when none ever was."""
        res = self._run(f"cat {shlex.quote(self._path(HOST_APPLIED))}", check=False)
        return {HOST_APPLIED: res.stdout} if res.rc == 0 else {}

    # --- configs ----------------------------------------------------------------------------------------
    def _running_config(self, full: bool) -> str:
        # Without vtysh's banner, so the text loads back as a candidate (the deploy's backup does that).
        return parsers.strip_frr_header(self._show("show running-config"))

    def _startup_config(self) -> str:
        res = self._run(self._priv(f"cat {shlex.quote(self._confdir + '/frr.conf')}"), check=False)
        return res.stdout if res.rc == 0 else ""

    # --- getters (interfaces, BGP, LLDP, ECMP width: base.SSHDriverBase) -------------------------------
    def get_facts(self) -> models.FactsDict:
        facts = self._linux_facts()
        version = self._show("show version").splitlines()
        return {
            "hostname": facts["hostname"],
            "fqdn": facts["fqdn"],
            "vendor": "FRRouting",
            "model": facts["product"] or f"Linux {facts['machine']}",
            "os_version": next((v.strip() for v in version if v.strip().startswith("FRRouting")), facts["os"]),
            "serial_number": facts["serial"],
            "uptime": float(facts["uptime"] or -1),
            "interface_list": sorted(self.get_interfaces()),
        }

    # --- the Linux side, as parsed data (netfab extras for audit and verify) ---------------------------
    def get_kernel_state(self) -> kernel_state.KernelState:
        """netfab extra: what the host script (`<name>.sh`) sets, as the kernel has it now.

        The contract (shape, the command run on the device, its parser) is netfab.deploy.kernel_state, shared
        with the audit; `env` reports the environment this driver runs host scripts with.
        """
        out = self._run(self._priv(kernel_state.COMMAND), what="read the kernel state").stdout
        return kernel_state.parse(out, self.optional_args.get("host_script_env"))

    def get_qos_state(self) -> QosState:
        """netfab extra for verify's QoS check: {"expected": {...}, "actual": {...}, "notes": [...]}.

        Shows the ECMP hash policy (per family) and seed, and the ECN marking mode in force. Expected values
        come from the host script netfab last applied on this device; without one (a lab brought up without a
        deploy) there is nothing to compare and the state is reported in a note. With ECN_MODE=auto the script
        picks RED where the kernel has it, else nftables: either is what it intended, "off" is not.
        PFC gets a note on veth ports: they have no DCB, so PFC cannot run there.
        """
        import re

        state = self.get_kernel_state()
        sysctl = state["sysctl"]
        actual: dict[str, Any] = {}
        for fam in ("ipv4", "ipv6"):
            if f"net.{fam}.fib_multipath_hash_policy" in sysctl:
                actual[f"{fam} ECMP hash policy"] = sysctl[f"net.{fam}.fib_multipath_hash_policy"]
        if "net.ipv4.fib_multipath_hash_seed" in sysctl:
            actual["ECMP hash seed"] = sysctl["net.ipv4.fib_multipath_hash_seed"]
        mode = state["ecn"]["mode"]
        actual["ECN marking mode"] = mode
        notes: list[str] = []
        # the management port carries no RoCE traffic: only fabric and host ports count for PFC
        ports = {p: link for p, link in state["links"].items() if not p.startswith("mgmt")}
        veth = sorted(p for p, link in ports.items() if link.get("kind") == "veth")
        if veth:
            notes.append(
                f"PFC not verified: {len(veth)} ports are veth ({', '.join(veth[:4])}{'...' if len(veth) > 4 else ''}),"
                " which have no DCB (dcb: Operation not supported); PFC is rendered but not enforced"
            )
        res = self._run(f"cat {shlex.quote(self._path(HOST_APPLIED))}", check=False)
        script = res.stdout if res.rc == 0 else ""
        if not script.strip():
            now = ", ".join(f"{k} {v}" for k, v in actual.items())
            notes.append(f"no host script applied by netfab here yet, nothing to compare; kernel: {now}")
            return {"expected": {}, "actual": actual, "notes": notes}
        expected: dict[str, Any] = {}
        for fam in ("ipv4", "ipv6"):
            if m := re.search(rf"must_sysctl net\.{fam}\.fib_multipath_hash_policy (\d+)", script):
                expected[f"{fam} ECMP hash policy"] = int(m.group(1))
        seed = re.search(r"sysctl_set net\.ipv4\.fib_multipath_hash_seed (\d+)", script)
        if "ECMP hash seed" in actual and seed:
            expected["ECMP hash seed"] = int(seed.group(1))
        wanted = str((self.optional_args.get("host_script_env") or {}).get("ECN_MODE", "auto"))
        if not re.search(r"limit pq\d+_", script):
            expected["ECN marking mode"] = "off"
        elif wanted in ("red", "nftables", "off"):
            expected["ECN marking mode"] = wanted
        else:
            expected["ECN marking mode"] = mode if mode in ("red", "nftables") else "red or nftables"
        return {"expected": expected, "actual": actual, "notes": notes}


def _errors(stdout: str, stderr: str = "") -> str:
    """frr-reload's complaints: vtysh's "% ..."/"line N: ..." lines (stdout) and its non-INFO log lines (stderr)."""
    keep = [line.strip() for line in stdout.splitlines() if line.lstrip().startswith(("%", "line "))]
    keep += [line.strip() for line in stderr.splitlines() if line.strip() and "INFO:" not in line]
    return "\n".join(dict.fromkeys(keep))[-1500:]
