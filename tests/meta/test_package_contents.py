"""Every module of netfab ships in the wheel: setup.py lists packages with setuptools' find_packages, which
skips a directory without __init__.py, so a module there is missing from a `pip install` (the tests, which
import from the source tree, would not notice). netfab/health had none: an installed netfab's lint crashed
with LINT-INTERNAL (platforms/model.py imports netfab.health.counters)."""

from __future__ import annotations

from pathlib import Path

from setuptools import find_packages

ROOT = Path(__file__).resolve().parents[2]


def test_every_directory_with_modules_is_a_package_the_wheel_ships() -> None:
    shipped = set(find_packages(where=str(ROOT), include=["netfab", "netfab.*"]))
    with_modules = {
        ".".join(d.relative_to(ROOT).parts)
        for d in (ROOT / "netfab").rglob("*")
        if d.is_dir() and d.name != "__pycache__" and any(d.glob("*.py"))
    } | {"netfab"}
    assert with_modules - shipped == set(), "add an __init__.py so setup.py's find_packages ships them"
