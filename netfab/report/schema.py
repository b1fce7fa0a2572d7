"""The JSON Schema of the report envelope (docs/report.schema.json), generated from these models.

The models describe what `netfab.report.json_report` writes; they are not used to write it (plain dicts are
faster and need no pydantic at report time). `netfab schema --report` prints the schema; a test keeps the
published file current, and every verb's JSON output is validated against it in the tests.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from netfab.core.findings import Severity, Status
from netfab.report.json_report import SCHEMA_VERSION

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReportLocation(_Strict):
    """A position in a file, relative to the repository root; line and column are 1-based, 0 = unknown."""

    file: str
    line: int = Field(ge=0)
    column: int = Field(ge=0)


class ReportFinding(_Strict):
    """One result of a check (a lint rule, a verify check, an audited fact, an analysis)."""

    id: str = Field(
        pattern=r"^[0-9a-f]{32}:[1-9][0-9]*$",
        description="Stable across runs and line shifts (the SARIF partialFingerprint): track a finding by it.",
    )
    rule_id: str = Field(description="`netfab rules RULE_ID` explains it.")
    status: Status = Field(description="pass, fail, skip, or error (the check itself could not run).")
    severity: Severity
    message: str
    hint: str
    path: str = Field(description="Field path in the intent, or fact path on the device; empty when none.")
    subject: str = Field(description="The device the finding is about; empty for findings about files.")
    location: ReportLocation | None
    related: list[ReportLocation]
    expected: Any = Field(description="What the check wanted (verify); null when it does not apply.")
    actual: Any = Field(description="What the check saw (verify); null when it does not apply.")


class ReportSummary(_Strict):
    """Counts. errors/warnings/infos count problems (status fail or error) by severity."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    errors: int = Field(ge=0, description="Problems of severity error: they fail the run (exit 1).")
    warnings: int = Field(ge=0, description="Problems of severity warning: they fail the run only with --strict.")
    infos: int = Field(ge=0, description="Problems of severity info (notes): they never fail the run.")
    files: int = Field(ge=0, description="Files with at least one problem.")
    subjects: int = Field(ge=0, description="Devices with at least one problem.")
    passed: int = Field(ge=0, alias="pass", description="Findings with status pass (verify reports its passes).")
    failed: int = Field(ge=0, alias="fail", description="Findings with status fail.")
    skipped: int = Field(ge=0, alias="skip", description="Checks the platform cannot show (status skip).")
    errored: int = Field(ge=0, alias="error", description="Checks that could not run (status error): unknown.")
    total: int = Field(ge=0, description="Every finding, whatever its status.")


class ReportTool(_Strict):
    name: Literal["netfab"]
    version: str


class ReportEnvelope(_Strict):
    """The JSON report of every netfab reporting verb (`--format json`)."""

    schema_version: Literal[2]
    tool: ReportTool
    verb: Literal["lint", "verify", "audit", "analyze", "diff", "health", "sot"]
    summary: ReportSummary
    findings: list[ReportFinding]
    details: dict[str, Any] | None = Field(
        description="The verb's own document (audit: fleet groups and devices; analyze: the analysis); null "
        "when the verb has none."
    )


def report_schema() -> dict[str, Any]:
    assert SCHEMA_VERSION == 2, "bump the Literal above with SCHEMA_VERSION"
    body = ReportEnvelope.model_json_schema(by_alias=True)
    body["title"] = "netfab report"
    return {"$schema": JSON_SCHEMA_DIALECT, **body}


def report_schema_text() -> str:
    return json.dumps(report_schema(), indent=2, ensure_ascii=False) + "\n"
