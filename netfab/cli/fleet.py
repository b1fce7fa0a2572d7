"""Helpers the deploy, rollback and verify verbs share: the Nornir they connect with."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from netfab.core.exitcodes import ExitCode

if TYPE_CHECKING:
    from nornir.core import Nornir

    from netfab.deploy.target import Target
    from netfab.design import FabricPlan


def nornir_for(plan: FabricPlan, target: Target, workers: int) -> Nornir:
    from netfab.cli.pipeline import err_console
    from netfab.deploy.inventory import InventoryError, build_nornir, load_inventory_data

    try:
        hosts, groups = load_inventory_data(target.generated_inventory, target.overrides)
    except InventoryError as exc:
        err_console.print(f"netfab: {exc}")
        raise typer.Exit(ExitCode.USAGE) from None
    return build_nornir(hosts, groups, target.credentials, workers=workers)
