"""`netfab schema`: the intent's JSON Schema, for yaml-language-server (completion and checks in editors);
`netfab schema --report`: the JSON Schema of every reporting verb's `--format json` envelope;
`netfab schema --markdown`: docs/intent-reference.md (netfab.cli.schema_markdown).

The example intents point at docs/intent.schema.json with a `# yaml-language-server: $schema=` comment; that
file and docs/report.schema.json are this command's output, committed and kept current by a test.
"""

from __future__ import annotations

import ast
import inspect
import json
import sys
import textwrap
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
    from pydantic_core.core_schema import ModelSchema

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def register(app: typer.Typer) -> None:
    app.command("schema")(schema)


def schema(
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the schema to FILE (atomically)."),
    report: bool = typer.Option(False, "--report", help="The schema of the JSON report envelope instead."),
    markdown: bool = typer.Option(
        False, "--markdown", help="The intent reference as Markdown (docs/intent-reference.md) instead."
    ),
) -> None:
    """Print the JSON Schema of an intent file (or, with --report, of the JSON reports; with --markdown, the
    intent reference: every field with type, unit, default and example)."""
    if report and markdown:
        from netfab.cli.pipeline import err_console
        from netfab.core.exitcodes import ExitCode

        err_console.print("netfab schema: --report and --markdown are two different documents; choose one")
        raise typer.Exit(ExitCode.USAGE)
    if markdown:
        from netfab.cli.schema_markdown import intent_reference_text

        text = intent_reference_text()
    elif report:
        from netfab.report.schema import report_schema_text

        text = report_schema_text()
    else:
        text = schema_text()
    if output is None:
        sys.stdout.write(text)
        return
    from netfab.core.fs import atomic_write_text

    atomic_write_text(output, text)


def intent_schema() -> dict[str, Any]:
    from netfab.intent import Intent

    body = Intent.model_json_schema(by_alias=True, schema_generator=_generator())
    body["title"] = "netfab intent"
    return {"$schema": JSON_SCHEMA_DIALECT, **body}


def _generator() -> type[GenerateJsonSchema]:
    from pydantic.json_schema import GenerateJsonSchema

    class WithFieldDocstrings(GenerateJsonSchema):
        """Each field's description from the docstring under it, as pydantic's use_attribute_docstrings would
        give, read only when a schema is asked for: that option reads every model's source at import, ~35 ms of
        every netfab command that reads an intent (8 % of a cold `netfab lint` at 24k GPUs) for text only the
        schema shows. A field with an explicit Field(description=...) keeps it."""

        def model_schema(self, schema: ModelSchema) -> JsonSchemaValue:
            json_schema = super().model_schema(schema)
            properties = json_schema.get("properties", {})
            cls = schema["cls"]
            for name, info in cls.model_fields.items():
                # The property is named as pydantic names it in validation mode: validation alias, alias, name.
                keys = (info.validation_alias, info.alias) if self.by_alias else ()
                key = next((k for k in keys if isinstance(k, str)), name)
                prop = properties.get(key)
                if prop is None or info.description is not None or "description" in prop:
                    continue
                text = field_docstrings(_owner(cls, name)).get(name)
                if text is not None:
                    prop["description"] = text
            return json_schema

    return WithFieldDocstrings


def _owner(cls: type, name: str) -> type:
    """The class whose body declares field `name` (pydantic reads a field's docstring there, not in a subclass
    that only inherits it)."""
    return next((k for k in cls.__mro__ if name in vars(k).get("__annotations__", {})), cls)


@cache
def field_docstrings(cls: type) -> dict[str, str]:
    """{field: docstring} for `name: type` lines of cls's own body followed by a string, cleaned as
    inspect.cleandoc does (pydantic's rule for use_attribute_docstrings)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):  # no source (a frozen app): no descriptions, not a crash
        return {}
    body = next((n.body for n in tree.body if isinstance(n, ast.ClassDef)), [])
    docs: dict[str, str] = {}
    for stmt, after in pairwise(body):
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[stmt.target.id] = inspect.cleandoc(after.value.value)
    return docs


def schema_text() -> str:
    return json.dumps(intent_schema(), indent=2, ensure_ascii=False) + "\n"
