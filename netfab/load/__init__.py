"""Load intent YAML into plain data with a source map, so every later error points at file:line:column.

Which files, in which order (later wins)
----------------------------------------
- Each PATH argument is a YAML file or a directory. A directory contributes every ``*.yaml`` and ``*.yml``
  file directly inside it (not recursive; dotfiles skipped), in sorted file-name order (plain character
  order: ``10-qos.yaml`` sorts before ``9-x.yaml``, so use zero-padded prefixes such as ``00-``, ``10-``).
- Several PATH arguments are merged in the order given, after expanding directories as above.
- Merging: a later file wins. Mappings are deep-merged key by key; any other value (a scalar, a list, or an
  explicit null) replaces the earlier value whole: lists are never concatenated.
- Positions in errors are those of the file whose value won.
- Anchors, aliases and merge keys (``<<: *base``) work within one file, not across files.

What is reported instead of raised
----------------------------------
YAML000 unparseable YAML or a value that cannot be constructed; YAML001 duplicate key; YAML002 YAML 1.1 boolean
words (yes/no/on/off/y/n) unquoted; YAML003 leading-zero or base-60 numbers; YAML004 tabs in indentation;
LOAD001 missing/unreadable path; LOAD002 top level not a mapping; LOAD003 alias bomb or nesting too deep;
LOAD004 empty file (note); LOAD005 merged whole intents (each with a topology) naming different fabrics.
`IntentSource.unreadable` is true when a YAML000 or LOAD001-003 error exists: the CLI exits 2 for those, and 1
for other findings.
"""

from typing import TYPE_CHECKING

from netfab.core.findings import RuleInfo, Severity
from netfab.load.merge import UNREADABLE_RULES, IntentSource, expand_paths, load_intent_source, merge_data
from netfab.load.yamlsource import DataPath, SourceMap, dotted, parse_yaml_file, parse_yaml_text

if TYPE_CHECKING:
    from netfab.load.schema_errors import validation_findings


def __getattr__(name: str) -> object:
    # Loading YAML needs no pydantic; schema findings do. Imported on first use, so the no-op build's
    # up-to-date check (which only reads the YAML) does not pay ~0.05 s for pydantic.
    if name == "validation_findings":
        from netfab.load.schema_errors import validation_findings

        return validation_findings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_E, _W, _I = Severity.ERROR, Severity.WARNING, Severity.INFO

# Rule metadata for reports (SARIF rule list, JUnit test cases). The first doc paragraph is the summary.
RULES: tuple[RuleInfo, ...] = (
    RuleInfo("YAML000", "YAML syntax error", _E, "The file is not valid YAML, or a value cannot be read."),
    RuleInfo(
        "YAML001",
        "Duplicate mapping key",
        _E,
        "A key appears twice in one mapping.\n\nYAML parsers silently keep the last value, so the first "
        "entry is ignored without a word. Remove or merge one of them.",
    ),
    RuleInfo(
        "YAML002",
        "YAML 1.1 boolean word",
        _E,
        "An unquoted yes/no/on/off/y/n is a boolean in YAML 1.1 and a string in YAML 1.2.\n\n"
        "`pfc: on` means true to PyYAML but the string 'on' to other tools. Quote it or write true/false.",
    ),
    RuleInfo(
        "YAML003",
        "Ambiguous number",
        _E,
        "A number with a leading zero (0755) or colons (1:30) reads differently in YAML 1.1 and 1.2.\n\n"
        "YAML 1.1 reads 0755 as octal 493 and 1:30 as 90 (base 60). Drop the leading zero or quote it.",
    ),
    RuleInfo("YAML004", "Tab in indentation", _E, "YAML indentation must use spaces; a tab was found."),
    RuleInfo("LOAD001", "Unreadable input", _E, "A path is missing, unreadable, not UTF-8, or has no YAML."),
    RuleInfo("LOAD002", "Top level is not a mapping", _E, "An intent file must be a mapping of top-level keys."),
    RuleInfo("LOAD003", "Input too large or recursive", _E, "Alias expansion or nesting exceeds netfab's limits."),
    RuleInfo("LOAD004", "Empty file", _I, "The file has no content; it contributes nothing to the intent."),
    RuleInfo(
        "LOAD005",
        "Merged files name different fabrics",
        _W,
        "Files merged into one intent (a directory, or several paths) each describe a topology under a "
        "different fabric.name.\n\n"
        "They are most likely separate fabrics: `netfab lint --each DIR` checks each file on its own.",
    ),
    RuleInfo("SCHEMA-missing", "Missing required field", _E, "A required field is not set."),
    RuleInfo("SCHEMA-extra", "Unknown field", _E, "A field is not part of the intent schema (often a typo)."),
    RuleInfo("SCHEMA-type", "Wrong value type", _E, "A value has the wrong type (text where a number is due...)."),
    RuleInfo("SCHEMA-value", "Invalid value", _E, "A value is outside its allowed range or set of choices."),
)

__all__ = [
    "RULES",
    "UNREADABLE_RULES",
    "DataPath",
    "IntentSource",
    "SourceMap",
    "dotted",
    "expand_paths",
    "load_intent_source",
    "merge_data",
    "parse_yaml_file",
    "parse_yaml_text",
    "validation_findings",
]
