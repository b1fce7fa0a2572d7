"""The deploy inventory: the build's generated Nornir inventory, overlaid with user overrides, plus
credentials from the environment. Built in memory; nothing secret is ever written back."""

from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Any

from nornir.core import Nornir
from nornir.core.configuration import Config, LoggingConfig
from nornir.core.inventory import ConnectionOptions, Defaults, Group, Groups, Host, Hosts, Inventory, ParentGroups
from nornir.plugins.runners import ThreadedRunner

from netfab.core.ssh import env_options, insecure_host_keys_warning
from netfab.deploy.connection import CONNECTION_NAME, register
from netfab.deploy.credentials import Credentials


class InventoryError(Exception):
    pass


def _read(path: Path) -> dict[str, Any]:
    from netfab.load.document import DocumentError, load_mapping

    if not path.exists() and not path.is_symlink():
        return {}  # an override directory may carry only one of hosts.yaml / groups.yaml
    try:
        data, _ = load_mapping(path, "inventory")
    except DocumentError as exc:
        raise InventoryError(str(exc)) from None
    return data


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load_inventory_data(generated: Path, overrides: list[Path]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Hosts and groups: generated first, then each override dir's hosts.yaml/groups.yaml in order.
    Override hosts that the build does not know are refused: a typo must not create a device."""
    hosts = _read(generated / "hosts.yaml")
    groups = _read(generated / "groups.yaml")
    if not hosts:
        raise InventoryError(f"{generated}/hosts.yaml is missing or empty: run `netfab build` first")
    for directory in overrides:
        extra_hosts = _read(directory / "hosts.yaml")
        unknown = sorted(set(extra_hosts) - set(hosts))
        if unknown:
            raise InventoryError(f"{directory}/hosts.yaml names hosts the fabric does not have: {', '.join(unknown)}")
        for name, data in extra_hosts.items():
            if data is not None and not isinstance(data, dict):
                raise InventoryError(f"{directory}/hosts.yaml: host {name!r} must be a mapping of settings")
            hosts[name] = _merge(hosts[name], data or {})
        groups = _merge(groups, _read(directory / "groups.yaml"))
    return hosts, groups


def _conn_opts(data: dict[str, Any] | None) -> dict[str, ConnectionOptions]:
    out = {}
    for name, opts in (data or {}).items():
        out[name] = ConnectionOptions(
            hostname=opts.get("hostname"),
            port=opts.get("port"),
            username=opts.get("username"),
            password=None,  # never from files
            platform=opts.get("platform"),
            extras=copy.deepcopy(opts.get("extras") or {}),
        )
    return out


def build_nornir(
    hosts_data: dict[str, Any], groups_data: dict[str, Any], credentials: Credentials, workers: int = 8
) -> Nornir:
    register()
    ssh_env = env_options()
    if credentials.accept_unknown_host_keys:
        insecure_host_keys_warning()
    groups = Groups()
    for name, data in groups_data.items():
        groups[name] = Group(
            name=name,
            data=copy.deepcopy(data.get("data") or {}),
            connection_options=_conn_opts(data.get("connection_options")),
        )
    hosts = Hosts()
    for name, data in hosts_data.items():
        host_groups = ParentGroups(groups[g] for g in data.get("groups", []) if g in groups)
        conn = _conn_opts(data.get("connection_options"))
        # Each host gets its own resolved copy of the options (never a dict shared with its group).
        resolved_platform = None
        resolved_extras: dict[str, Any] = {}
        for g in host_groups:
            opts = g.connection_options.get(CONNECTION_NAME)
            if opts is not None:
                resolved_platform = resolved_platform or opts.platform
                resolved_extras = _merge(opts.extras or {}, resolved_extras)
        own = conn.get(CONNECTION_NAME)
        if own is not None:
            resolved_platform = own.platform or resolved_platform
            resolved_extras = _merge(resolved_extras, own.extras or {})
        optional_args = resolved_extras.setdefault("optional_args", {})
        if credentials.ssh_key is not None:
            optional_args.setdefault("key_file", str(credentials.ssh_key))
        if credentials.known_hosts is not None:
            optional_args.setdefault("known_hosts", str(credentials.known_hosts))
        if credentials.accept_unknown_host_keys:
            optional_args["accept_unknown_host_keys"] = True
        for key, value in ssh_env.items():  # NETFAB_SSH_JUMP, NETFAB_SSH_CONFIG: the inventory's own win
            optional_args.setdefault(key, value)
        conn[CONNECTION_NAME] = ConnectionOptions(
            hostname=own.hostname if own else None,
            port=own.port if own else None,
            username=credentials.username,
            password=credentials.password,
            platform=resolved_platform,
            extras=resolved_extras,
        )
        hosts[name] = Host(
            name=name,
            hostname=data.get("hostname"),
            port=data.get("port"),
            username=credentials.username,
            password=credentials.password,
            platform=data.get("platform"),
            groups=host_groups,
            data=copy.deepcopy(data.get("data") or {}),
            connection_options=conn,
        )
    inventory = Inventory(hosts=hosts, groups=groups, defaults=Defaults())
    # Nornir's own logging would write nornir.log into the operator's cwd; netfab reports results itself
    # (journal + summary), so it is off.
    # Fix: "off" does not silence a failed task's traceback, which nornir.core.task logs at ERROR; with no
    # handler anywhere Python's last-resort handler printed it (device output, unredacted) on stderr. A
    # NullHandler on the library's logger stops that; an operator's own logging config still gets records.
    nornir_logger = logging.getLogger("nornir")
    if not any(isinstance(h, logging.NullHandler) for h in nornir_logger.handlers):
        nornir_logger.addHandler(logging.NullHandler())
    config = Config(
        logging=LoggingConfig(enabled=False, level="CRITICAL", log_file="", format="", to_console=False, loggers=[])
    )
    return Nornir(inventory=inventory, runner=ThreadedRunner(num_workers=workers), config=config)
