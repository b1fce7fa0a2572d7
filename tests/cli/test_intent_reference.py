"""docs/intent-reference.md: generated from the schema, current, and complete (every field, a valid example)."""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path
from typing import Annotated, Any

import pytest
import yaml
from pydantic import BaseModel, TypeAdapter
from typer.testing import CliRunner

from netfab.cli import app as app_module
from netfab.cli.schema_cmd import intent_schema
from netfab.cli.schema_markdown import intent_reference_text
from netfab.intent import Intent


@cache
def _text() -> str:
    return intent_reference_text()


REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "docs" / "intent-reference.md"
UPDATE = os.environ.get("NETFAB_UPDATE_GOLDEN") == "1"
ROW = re.compile(r"^\| `(?P<field>[^`]+)` \| (?P<type>[^|]+) \| (?P<unit>[^|]*) \| (?P<default>[^|]+) \| "
                 r"(?P<example>[^|]+) \| (?P<description>.*) \|$")  # fmt: skip


def test_committed_reference_is_current() -> None:
    """Regenerate with `netfab schema --markdown > docs/intent-reference.md` (or NETFAB_UPDATE_GOLDEN=1)."""
    text = intent_reference_text()
    if UPDATE:
        REFERENCE.write_text(text, encoding="utf-8")
    assert REFERENCE.read_text(encoding="utf-8") == text, "docs/intent-reference.md is stale: regenerate it"


def test_cli_prints_the_reference() -> None:
    if not any(c.name == "schema" for c in app_module.app.registered_commands):
        app_module._register_verbs()
    result = CliRunner().invoke(app_module.app, ["schema", "--markdown"])
    assert result.exit_code == 0 and result.stdout == intent_reference_text()
    both = CliRunner().invoke(app_module.app, ["schema", "--markdown", "--report"])
    assert both.exit_code == 2


def _models() -> dict[str, type[BaseModel]]:
    """Every intent model by the name the JSON Schema's $defs use."""
    found: dict[str, type[BaseModel]] = {}
    todo: list[type[BaseModel]] = [Intent]
    while todo:
        model = todo.pop()
        if model.__name__ in found:
            continue
        found[model.__name__] = model
        for info in model.model_fields.values():
            for arg in _type_args(info.annotation):
                if isinstance(arg, type) and issubclass(arg, BaseModel):
                    todo.append(arg)
    return found


def _type_args(tp: Any) -> list[Any]:
    args = [tp]
    for arg in getattr(tp, "__args__", ()) or ():
        args.extend(_type_args(arg))
    return args


def _sections(text: str) -> dict[str, dict[str, dict[str, str]]]:
    """{anchor: {field: row cells}} as the document shows them."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    anchor = ""
    for line in text.splitlines():
        m = re.match(r'^<a id="([^"]+)"></a>$', line)
        if m:
            anchor = m.group(1)
            out[anchor] = {}
            continue
        row = ROW.match(line)
        if row and anchor:
            out[anchor][row.group("field")] = row.groupdict()
    return out


def test_every_field_of_every_model_has_a_row_with_type_default_and_example() -> None:
    sections = _sections(_text())
    schema = intent_schema()
    defs = schema["$defs"]
    expected = {"top-level": set(schema["properties"])}
    expected |= {name.lower(): set(body.get("properties", {})) for name, body in defs.items() if "properties" in body}
    for anchor, fields in expected.items():
        assert anchor in sections, f"no section for {anchor}"
        assert set(sections[anchor]) == fields, anchor
        for name, cells in sections[anchor].items():
            for column in ("type", "default", "example"):
                assert cells[column].strip(), f"{anchor}.{name}: empty {column}"


# Fields whose example the document writes as a link to its own section (objects) are checked there.
@pytest.mark.parametrize("model_name", sorted(_models()))
def test_every_example_validates_for_its_field(model_name: str) -> None:
    model = _models()[model_name]
    cells = _sections(_text())["top-level" if model is Intent else model_name.lower()]
    for name, info in model.model_fields.items():
        key = info.alias or name
        example = cells[key]["example"].strip()
        if example.startswith("see ["):
            continue
        written = yaml.safe_load(example.strip("`"))
        assert isinstance(written, dict) and key in written, f"{model_name}.{key}: example {example!r}"
        annotated = Annotated[info.annotation, *info.metadata] if info.metadata else info.annotation  # type: ignore[valid-type]
        TypeAdapter(annotated).validate_python(written[key])
