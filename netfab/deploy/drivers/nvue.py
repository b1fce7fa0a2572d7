"""NAPALM driver for NVIDIA Cumulus Linux through NVUE's CLI, over SSH (platform nvidia_cumulus).

Config cycle ([C] = CumulusNetworks/docs NVUE-CLI.md and nvue-reference Config-Commands, CL 5.x):
  load     upload startup.yaml-shaped YAML, `nv config replace <file>` (stages the pending revision)   [C]
  diff     `nv config diff -o commands` (pending vs applied)                                            [C]
  discard  `nv config detach`                                                                           [C]
  commit   `nv config apply -y [-m msg]`; with revert_in: `nv config apply --confirm <N>s -y`          [C] flags,
           [U] the "<N>s" unit form (docs only show a bare number: "--confirm 60 ... one hour")
  confirm  `nv config apply --confirm-yes`                                                              [U]
  rollback pending: `nv config apply --confirm-no`                                                      [U]
           else: re-apply the config saved before the last commit (`nv config replace` + apply)         [C]
  running  `nv config show -o yaml` [C]; startup = /etc/nvue.d/startup.yaml [C]
[U] = seen only in secondary material (a napalm-cumulus fork, lab guides); the command words are class
constants below so they can be corrected in one place once checked on a switch.

has_pending_commit(): NVUE's own timer does the revert (it survives the deploy dying). This driver records
the deadline on the device (nvue.pending, epoch seconds) and reports pending until it passes or the commit is
confirmed/rolled back, rather than parsing `--confirm-status` output whose format is not documented.

Getters read Linux and FRR directly (Cumulus is Debian with kernel netdevs, FRR and lldpd): `ip -j link`,
`sudo vtysh ... json`, `sudo lldpctl -f json0` - formats that do not change with NVUE releases.
"""

from __future__ import annotations

import shlex
from typing import ClassVar

import yaml
from napalm.base import models
from napalm.base.exceptions import (
    CommandErrorException,
    CommitConfirmException,
    CommitError,
    ReplaceConfigException,
)

from netfab.deploy.drivers import base as _base

CANDIDATE = "candidate.yaml"
ROLLBACK = "rollback.yaml"
PENDING = "nvue.pending"


class NVUEDriver(_base.SSHDriverBase):
    platform = "nvidia_cumulus"
    default_sudo = True  # for vtysh/lldpctl only: `nv` runs as the login user (nvapply group)

    NV: ClassVar[str] = "nv"
    CONFIRM_ARG: ClassVar[str] = "{seconds}s"  # [U] unit form
    CONFIRM_YES: ClassVar[tuple[str, ...]] = ("config", "apply", "--confirm-yes")  # [U]
    CONFIRM_NO: ClassVar[tuple[str, ...]] = ("config", "apply", "--confirm-no")  # [U]

    def _nv(self, *args: str) -> str:
        return shlex.join([self.NV, *args])

    # --- candidate --------------------------------------------------------------------------------------
    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        text = self._text_from(filename, config)
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ReplaceConfigException(f"{self.hostname}: candidate is not YAML: {exc}") from exc
        if not isinstance(doc, list | dict):
            raise ReplaceConfigException(f"{self.hostname}: candidate must be an NVUE document (list of set: ...)")
        path = self._upload(CANDIDATE, text)
        res = self._run(self._nv("config", "replace", path), check=False)
        if res.rc != 0:
            self._run(self._nv("config", "detach"), check=False)  # drop whatever part was staged
            raise ReplaceConfigException(f"{self.hostname}: nv config replace failed: {_base.redact(res.output)}")
        self._candidate = text

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        raise NotImplementedError("nvue: netfab renders whole startup.yaml documents; use load_replace_candidate")

    def compare_config(self) -> str:
        if self._candidate is None:
            return ""
        res = self._run(self._nv("config", "diff", "-o", "commands"), what="nv config diff")
        return _base.redact(res.stdout.strip())

    def discard_config(self) -> None:
        self._run(self._nv("config", "detach"), check=False)
        self._candidate = None

    # --- commit / confirm / rollback ------------------------------------------------------------------
    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        if self._candidate is None:
            raise CommitError(f"{self.hostname}: nothing to commit (load a candidate first)")
        if self.has_pending_commit():
            raise CommitError(f"{self.hostname}: a commit is pending confirmation; confirm or roll it back first")
        # What rollback() re-applies once the NVUE timer is no longer involved.
        rb = shlex.quote(self._path(ROLLBACK))
        self._run(f"umask 077 && {self._nv('config', 'show', '-o', 'yaml')} > {rb}.tmp && mv -f {rb}.tmp {rb}")
        args = ["config", "apply", "-y"]
        if revert_in is not None:
            if int(revert_in) < 1:
                raise CommitError(f"{self.hostname}: revert_in must be a positive number of seconds")
            args += ["--confirm", self.CONFIRM_ARG.format(seconds=int(revert_in))]
        if message:
            args += ["-m", " ".join(message.split())[:500]]
        res = self._run(self._nv(*args), check=False, timeout=600)
        if res.rc != 0:
            # NVUE applies transactionally and reports the failure; say so, with the device's words.
            self._candidate = None
            raise CommitError(f"{self.hostname}: nv config apply failed (rc={res.rc}): {_base.redact(res.output)}")
        if revert_in is not None:
            pending = shlex.quote(self._path(PENDING))
            self._run(f"echo $(( $(date +%s) + {int(revert_in)} )) > {pending}", what="record the confirm deadline")
        self._candidate = None

    def has_pending_commit(self) -> bool:
        res = self._run(
            f"f={shlex.quote(self._path(PENDING))}; [ -f $f ] && [ $(date +%s) -lt $(cat $f) ] && echo yes",
            check=False,
        )
        return res.stdout.strip() == "yes"

    def confirm_commit(self) -> None:
        if not self.has_pending_commit():
            raise CommitConfirmException(f"{self.hostname}: no pending commit to confirm")
        self._run(self._nv(*self.CONFIRM_YES), what="nv config apply --confirm-yes", error=CommitConfirmException)
        self._run(f"rm -f {shlex.quote(self._path(PENDING))}")

    def rollback(self) -> None:
        if self.has_pending_commit():
            self._run(self._nv(*self.CONFIRM_NO), what="nv config apply --confirm-no")
            self._run(f"rm -f {shlex.quote(self._path(PENDING))}")
            return
        rb = self._path(ROLLBACK)
        if self._run(f"test -f {shlex.quote(rb)}", check=False).rc != 0:
            raise CommandErrorException(f"{self.hostname}: nothing to roll back to (no commit was made by netfab)")
        self._run(self._nv("config", "replace", rb), what="stage the saved config")
        self._run(self._nv("config", "apply", "-y", "-m", "netfab rollback"), what="re-apply the saved config")

    # --- configs and getters ---------------------------------------------------------------------------
    def _running_config(self, full: bool) -> str:
        return self._run(self._nv("config", "show", "-o", "yaml"), what="nv config show").stdout

    def _startup_config(self) -> str:
        res = self._run("cat /etc/nvue.d/startup.yaml", check=False)
        return res.stdout if res.rc == 0 else ""

    def get_facts(self) -> models.FactsDict:
        facts = self._linux_facts()
        return {
            "hostname": facts["hostname"],
            "fqdn": facts["fqdn"],
            "vendor": "NVIDIA",
            "model": facts["product"] or facts["machine"],
            "os_version": facts["os"],
            "serial_number": facts["serial"],
            "uptime": float(facts["uptime"] or -1),
            "interface_list": sorted(self.get_interfaces()),
        }
