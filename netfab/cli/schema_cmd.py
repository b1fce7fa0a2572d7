"""`netfab schema`: the intent's JSON Schema, for yaml-language-server (completion and checks in editors);
`netfab schema --report`: the JSON Schema of every reporting verb's `--format json` envelope;
`netfab schema --markdown`: docs/intent-reference.md (netfab.cli.schema_markdown).

The example intents point at docs/intent.schema.json with a `# yaml-language-server: $schema=` comment; that
file and docs/report.schema.json are this command's output, committed and kept current by a test.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

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

    body = Intent.model_json_schema(by_alias=True)
    body["title"] = "netfab intent"
    return {"$schema": JSON_SCHEMA_DIALECT, **body}


def schema_text() -> str:
    return json.dumps(intent_schema(), indent=2, ensure_ascii=False) + "\n"
