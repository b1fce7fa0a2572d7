"""Every other YAML file netfab reads (playbooks, inventories, audit runbooks) through the intent's loader.

They used to go through ``yaml.safe_load``: no size, depth or alias limits (a billion-laughs playbook took
117 s and 2.5 GB, a 30,000-deep one crashed the process) and errors without a line. Here they get the same
caps as an intent, and the same file:line:column findings, schema errors included.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from netfab.core.findings import Finding, Severity
from netfab.load.merge import UNREADABLE_RULES, IntentSource
from netfab.load.schema_errors import validation_findings
from netfab.load.yamlsource import parse_yaml_file, parse_yaml_value

M = TypeVar("M", bound=BaseModel)


class DocumentError(ValueError):
    """A YAML document that cannot be used; str() is one `file:line:col: RULE message (hint)` line per finding."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = findings
        super().__init__("; ".join(_line(f) for f in findings))


def _line(f: Finding) -> str:
    return f"{f.location}: {f.rule_id} {f.message}" + (f" ({f.hint})" if f.hint else "")


def load_mapping(path: Path, kind: str) -> tuple[dict[str, Any], IntentSource]:
    """The top-level mapping of one YAML file ({} when it is empty), with its source map.

    Every error-severity finding refuses the file, duplicate keys included: a playbook with two
    `failure_budget:` lines would otherwise run with whichever YAML kept, without a word.
    """
    parsed = parse_yaml_file(path, kind)
    errors = [f for f in parsed.findings if f.severity is Severity.ERROR]
    if errors:
        raise DocumentError(errors)
    data = parsed.data or {}
    return data, IntentSource(data, parsed.source_map, [], [path])


def load_model(path: Path, model: type[M], kind: str) -> M:
    """Load and validate one YAML file as `model`; schema errors point at the file's lines."""
    data, source = load_mapping(path, kind)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise DocumentError(validation_findings(exc, source, model)) from None


def load_data(text: str, name: str, kind: str) -> Any:
    """YAML text that is data, not a netfab document (an NVUE config from a device or `audit --from-dir`): any
    top-level shape, the same caps. Only unreadable input refuses it (DocumentError): the device, not netfab's
    style rules, decides what its own config may look like."""
    data, findings = parse_yaml_value(text, Path(name), kind)
    fatal = [f for f in findings if f.rule_id in UNREADABLE_RULES and f.severity is Severity.ERROR]
    if fatal:
        raise DocumentError(fatal)
    return data
