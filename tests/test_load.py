"""Source-mapped intent loading: positions, YAML hazards, merge precedence, and never raising on bad input."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from netfab.core.findings import Location, Severity
from netfab.load import IntentSource, dotted, load_intent_source, validation_findings

FIXTURES = Path(__file__).parent / "fixtures" / "load"


def load_text(tmp_path: Path, text: str | bytes, name: str = "intent.yaml") -> IntentSource:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return load_intent_source([path])


def rules(source: IntentSource) -> list[str]:
    return [f.rule_id for f in source.findings]


def at(source: IntentSource, rule: str) -> list[tuple[int, int]]:
    return [(f.location.line, f.location.column) for f in source.findings if f.rule_id == rule]


# --- positions -------------------------------------------------------------------------------------------

POSITIONS = """\
fabric:
  name: lab
qos:
  classes:
    - name: roce
      dscp: 26
    - {name: cnp, dscp: 48}
"""


def test_values_and_locations_are_exact(tmp_path: Path) -> None:
    source = load_text(tmp_path, POSITIONS)
    file = str(tmp_path / "intent.yaml")
    assert source.findings == []
    assert source.data == {
        "fabric": {"name": "lab"},
        "qos": {"classes": [{"name": "roce", "dscp": 26}, {"name": "cnp", "dscp": 48}]},
    }
    smap = source.source_map
    assert smap.locate(("fabric", "name")) == Location(file, 2, 9)
    assert smap.locate(("qos", "classes", 0, "dscp")) == Location(file, 6, 13)
    assert smap.locate(("qos", "classes", 1)) == Location(file, 7, 7)
    assert smap.locate(("qos", "classes", 1, "dscp")) == Location(file, 7, 25)
    assert smap.key_location(("qos", "classes", 1, "dscp")) == Location(file, 7, 19)
    assert smap.key_location(("qos",)) == Location(file, 3, 1)


def test_missing_field_is_located_at_nearest_existing_ancestor(tmp_path: Path) -> None:
    smap = load_text(tmp_path, POSITIONS).source_map
    file = str(tmp_path / "intent.yaml")
    assert smap.locate(("qos", "classes", 0, "pfc", "priority")) == smap.locate(("qos", "classes", 0))
    assert smap.locate(("qos", "classes", 0)) == Location(file, 5, 7)
    assert smap.locate(("nope",)) == Location(file, 1, 1)
    assert smap.key_location(("qos", "nope")) is None


# --- YAML hazards ----------------------------------------------------------------------------------------


def test_duplicate_key_points_at_second_occurrence_with_first_as_related(tmp_path: Path) -> None:
    source = load_text(tmp_path, "underlay:\n  mtu: 9216\n  asn: 1\n  mtu: 9000\n")
    [finding] = source.findings
    assert (finding.rule_id, finding.severity, finding.path) == ("YAML001", Severity.ERROR, "underlay.mtu")
    assert (finding.location.line, finding.location.column) == (4, 3)
    assert [(r.line, r.column) for r in finding.related] == [(2, 3)]
    assert source.data["underlay"]["mtu"] == 9000  # PyYAML semantics: the last value wins
    assert not source.unreadable


@pytest.mark.parametrize("word", ["yes", "No", "ON", "off", "y", "N", "tRuE", "fAlse"])
def test_yaml11_boolean_words_are_errors(tmp_path: Path, word: str) -> None:
    source = load_text(tmp_path, f"pfc:\n  enabled: {word}\n")
    [finding] = source.findings
    assert finding.rule_id == "YAML002" and finding.severity is Severity.ERROR
    assert (finding.location.line, finding.location.column) == (2, 12)
    assert finding.hint == f"quote it ('{word}') or use true/false"
    assert finding.path == "pfc.enabled"


@pytest.mark.parametrize("text", ["a: true", "a: False", "a: TRUE", "a: 'on'", 'a: "yes"', "a: yesterday", "y: 1"])
def test_unambiguous_booleans_and_quoted_words_are_fine(tmp_path: Path, text: str) -> None:
    assert load_text(tmp_path, text + "\n").findings == []


def test_boolean_word_as_key_is_flagged_but_kept_as_string(tmp_path: Path) -> None:
    source = load_text(tmp_path, "on: 1\n")
    assert rules(source) == ["YAML002"] and source.data == {"on": 1}


@pytest.mark.parametrize(
    # A base-60 scalar is kept as its text (YAML 1.2's reading, and what an intent's author means by 1:1).
    ("value", "constructed"),
    [("0755", 493), ("010", 8), ("-010", -8), ("089", "089"), ("1:30", "1:30")],
)
def test_octal_and_sexagesimal_numbers_are_errors(tmp_path: Path, value: str, constructed: object) -> None:
    source = load_text(tmp_path, f"x:\n  - {value}\n")
    [finding] = source.findings
    assert (finding.rule_id, finding.severity) == ("YAML003", Severity.ERROR)
    assert (finding.location.line, finding.location.column) == (2, 5)
    assert source.data == {"x": [constructed]}


@pytest.mark.parametrize("text", ["a: 0", "a: 0.5", "a: '0755'", "a: 65000:100", "a: 10", "a: 0x1f", "a: -0"])
def test_ordinary_numbers_are_fine(tmp_path: Path, text: str) -> None:
    assert load_text(tmp_path, text + "\n").findings == []


def test_tab_in_indentation_points_at_the_tab(tmp_path: Path) -> None:
    source = load_text(tmp_path, "a:\n  b: 1\n \tc: 2\n")
    assert at(source, "YAML004") == [(3, 2)]
    assert source.unreadable  # libyaml rejects this one too (YAML000)


def test_tab_inside_block_scalar_content_is_not_indentation(tmp_path: Path) -> None:
    source = load_text(tmp_path, "motd: |\n  line\n  \tindented\nb: 1\n")
    assert source.findings == [] and source.data["motd"] == "line\n\tindented\n"


def test_syntax_error_has_position_and_no_exception(tmp_path: Path) -> None:
    source = load_text(tmp_path, "a: 1\nb: [1, 2\nc: 3\n")
    [finding] = source.findings
    assert finding.rule_id == "YAML000" and source.unreadable
    assert (finding.location.line, finding.location.column) == (3, 2)
    assert finding.related and finding.related[0].line == 2
    assert source.data == {}


def test_invalid_timestamp_is_a_finding_not_a_value_error(tmp_path: Path) -> None:
    source = load_text(tmp_path, "a: 2024-13-45\n")
    assert rules(source) == ["YAML000"] and at(source, "YAML000") == [(1, 4)]


@pytest.mark.parametrize("value", ["!!int 1:30a", "!!int 09"])
def test_an_explicit_int_that_is_no_number_is_a_finding_not_a_value_error(tmp_path: Path, value: str) -> None:
    """Found by test_random_text_never_raises (`!!int 1:30a`): PyYAML's int constructor raised from the
    base-60 and leading-zero checks."""
    source = load_text(tmp_path, f"a: {value}\n")
    assert rules(source) == ["YAML000"] and at(source, "YAML000") == [(1, 4)]
    assert "as int" in source.findings[0].message


def test_custom_tags_are_refused(tmp_path: Path) -> None:
    source = load_text(tmp_path, "a: !vault 1234\n")
    assert rules(source) == ["YAML000"] and "!vault" in source.findings[0].message


# --- anchors, aliases, limits ----------------------------------------------------------------------------


def test_merge_keys_and_aliases_locate_at_the_anchor(tmp_path: Path) -> None:
    text = "base: &b\n  mtu: 9216\n  asn: 1\nleaf:\n  <<: *b\n  asn: 2\n"
    source = load_text(tmp_path, text)
    assert source.findings == []
    assert source.data["leaf"] == {"mtu": 9216, "asn": 2}
    assert source.source_map.locate(("leaf", "mtu")).line == 2
    assert source.source_map.locate(("leaf", "asn")).line == 6


def test_hazard_inside_an_anchor_is_reported_once(tmp_path: Path) -> None:
    source = load_text(tmp_path, "a: &x {p: on}\nb: *x\nc: *x\n")
    assert rules(source) == ["YAML002"]


def test_alias_bomb_is_capped(tmp_path: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    source = load_text(tmp_path, "\n".join(lines) + "\n")
    assert rules(source) == ["LOAD003"] and source.unreadable


def test_recursive_alias_and_deep_nesting_are_findings(tmp_path: Path) -> None:
    assert rules(load_text(tmp_path, "a: &x [1, *x]\n", "rec.yaml")) == ["LOAD003"]
    assert rules(load_text(tmp_path, "a: " + "[" * 500 + "]" * 500 + "\n", "deep.yaml")) == ["LOAD003"]


# --- unreadable input ------------------------------------------------------------------------------------


def test_missing_path_and_directory_without_yaml(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    source = load_intent_source([tmp_path / "nope.yaml", tmp_path / "empty"])
    assert rules(source) == ["LOAD001", "LOAD001"] and source.unreadable
    assert {f.location.file for f in source.findings} == {str(tmp_path / "nope.yaml"), str(tmp_path / "empty")}
    assert source.data == {} and source.files == []


@pytest.mark.parametrize(
    ("content", "rule", "position"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "LOAD001", (1, 1)),  # not UTF-8
        ("a: é\nb: ".encode() + b"\xff\n", "LOAD001", (2, 4)),  # position counts characters, not bytes
        (b"a: 1\nb: \x00\x01\x02\n", "YAML000", (2, 4)),  # control characters
        (b"- 1\n- 2\n", "LOAD002", (1, 1)),  # a list
        (b"just a string\n", "LOAD002", (1, 1)),
    ],
)
def test_garbage_is_unreadable_without_traceback(tmp_path: Path, content: bytes, rule: str, position: tuple) -> None:
    source = load_text(tmp_path, content)
    assert rules(source) == [rule] and at(source, rule) == [position]
    assert source.unreadable and source.data == {}


def test_empty_file_is_a_note_not_an_error(tmp_path: Path) -> None:
    source = load_text(tmp_path, "# only a comment\n")
    assert rules(source) == ["LOAD004"] and source.findings[0].severity is Severity.INFO
    assert not source.unreadable and source.data == {}


def test_hazard_fixture_reports_every_problem_in_file_order() -> None:
    source = load_intent_source([FIXTURES / "hazards.yaml"])
    got = [(f.rule_id, f.location.line, f.location.column) for f in source.findings]
    assert got == [("YAML002", 3, 12), ("YAML003", 6, 9), ("YAML003", 7, 11), ("YAML001", 9, 3)]


# --- merge precedence ------------------------------------------------------------------------------------


def test_directory_merges_in_sorted_name_order_later_wins() -> None:
    directory = FIXTURES / "split"
    source = load_intent_source([directory])
    assert [p.name for p in source.files] == ["00-base.yaml", "10-qos.yml", "20-name.yaml"]
    assert source.findings == []
    assert source.data["fabric"] == {"name": "override", "description": "from base"}
    assert source.data["qos"]["pfc"] == {"priorities": [3, 4], "watchdog": True}  # lists replace whole
    assert len(source.data["qos"]["classes"]) == 2
    smap = source.source_map
    assert smap.locate(("fabric", "name")) == Location(str(directory / "20-name.yaml"), 2, 9)
    assert smap.locate(("fabric", "description")) == Location(str(directory / "00-base.yaml"), 4, 16)
    assert smap.locate(("qos", "pfc", "priorities", 1)) == Location(str(directory / "10-qos.yml"), 3, 21)
    assert smap.key_location(("qos", "pfc", "priorities")) == Location(str(directory / "10-qos.yml"), 3, 5)
    assert smap.locate(("qos", "pfc", "watchdog")).file.endswith("00-base.yaml")


def test_path_arguments_merge_in_argument_order() -> None:
    site = FIXTURES / "override" / "site.yaml"
    forward = load_intent_source([FIXTURES / "split", site])
    assert forward.data["qos"]["classes"] == [{"name": "only", "dscp": 10}]
    assert forward.source_map.locate(("qos", "classes", 0, "dscp")).file == str(site)
    # A value the winning list no longer has must not keep a stale location from the earlier file.
    assert forward.source_map.locate(("qos", "classes", 1, "dscp")).file == str(site)
    backward = load_intent_source([site, FIXTURES / "split"])
    assert len(backward.data["qos"]["classes"]) == 2


def test_bad_file_does_not_stop_the_others_from_loading(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("a: 1\n")
    (tmp_path / "b.yaml").write_text("b: [\n")
    source = load_intent_source([tmp_path])
    assert source.data == {"a": 1} and rules(source) == ["YAML000"] and source.unreadable


def test_two_thousand_line_intent_loads_whole(tmp_path: Path) -> None:
    """A 2,000-line document loads with nothing lost (its speed is measured in bench/lint_bench.py)."""
    blocks = [
        f"  - name: leaf{i}\n    asn: {65000 + i}\n    mtu: 9216\n    pfc: {{priorities: [3], watchdog: true}}\n"
        for i in range(500)
    ]
    path = tmp_path / "big.yaml"
    path.write_text("devices:\n" + "".join(blocks))
    source = load_intent_source([path])
    assert len(source.data["devices"]) == 500 and source.findings == []
    assert source.data["devices"][499]["asn"] == 65499


# YAML-shaped fragments reach far deeper into the parser and our constructor than uniform random text.
_FRAGMENTS = [
    "a", "b: ", "- ", "\n", "\n  ", "\n    ", "\t", "&x ", "*x", "<<: ", "{", "}", "[", "]", ", ", "? ",
    "yes", "0755", "1:30", "~", "!!int ", "!!str ", "!tag ", "|\n", ">-\n", "'", '"', "#", "---\n", "2024-13-45",
    "\x00", "\x85", "\u2028", "\r", "é", ".inf", "0x1g", "!!binary ", "!!set ",
]  # fmt: skip
_TEXT = st.lists(st.sampled_from(_FRAGMENTS), max_size=40).map("".join) | st.text()
_INPUT = _TEXT.map(lambda t: t.encode("utf-8", "surrogatepass")) | st.binary()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_INPUT)
def test_random_text_never_raises_and_findings_have_locations(tmp_path: Path, content: bytes) -> None:
    source = load_text(tmp_path, content)
    assert isinstance(source.data, dict)
    for finding in source.findings:
        assert finding.location.file == str(tmp_path / "intent.yaml")
        assert finding.location.line >= 0 and finding.location.column >= 0
        assert finding.rule_id and finding.message and finding.hint


# --- pydantic errors -> findings -------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TrafficClass(_Strict):
    name: str
    dscp: int = Field(ge=0, le=63)
    mode: Literal["lossless", "lossy"] = "lossy"


class Pfc(_Strict):
    priorities: list[int]
    watchdog: bool = True


class Qos(_Strict):
    classes: list[TrafficClass]
    pfc: Pfc | None = None
    ecn: dict[str, TrafficClass] = {}


class Doc(_Strict):
    qos: Qos
    version: int = Field(default=1, alias="schema_version")


SCHEMA_DOC = """\
qos:
  classes:
    - name: roce
      dscp: 26
      mode: lossles
    - name: cnp
      dscp: 99
      dcsp: 48
  pfc:
    priorities: three
  ecn:
    roce: {name: x}
"""


def schema_findings(tmp_path: Path, text: str, model: type[BaseModel] | None = Doc) -> dict[str, object]:
    source = load_text(tmp_path, text)
    with pytest.raises(ValidationError) as info:
        Doc.model_validate(source.data)
    return {f.path: f for f in validation_findings(info.value, source, model)}


def test_validation_errors_become_located_findings(tmp_path: Path) -> None:
    found = schema_findings(tmp_path, SCHEMA_DOC)
    file = str(tmp_path / "intent.yaml")
    expected = {
        "qos.classes[0].mode": ("SCHEMA-value", (5, 13)),
        "qos.classes[1].dscp": ("SCHEMA-value", (7, 13)),
        "qos.classes[1].dcsp": ("SCHEMA-extra", (8, 7)),  # at the key, not its value
        "qos.pfc.priorities": ("SCHEMA-type", (10, 17)),
        "qos.ecn.roce.dscp": ("SCHEMA-missing", (12, 5)),  # at the key opening the parent mapping
    }
    got = {path: (f.rule_id, (f.location.line, f.location.column)) for path, f in found.items()}
    assert got == expected
    assert all(f.location.file == file and f.severity is Severity.ERROR for f in found.values())
    dscp = found["qos.classes[1].dscp"]
    assert dscp.message == "qos.classes[1].dscp: Input should be less than or equal to 63 (got 99)"
    assert found["qos.classes[1].dscp"].hint == "must be <= 63"
    assert found["qos.classes[1].dcsp"].hint == "did you mean 'dscp'?"
    assert found["qos.classes[0].mode"].hint == "allowed: 'lossless' or 'lossy'"
    assert found["qos.pfc.priorities"].hint == "expected a list here (`- item` lines or [a, b])"
    assert found["qos.ecn.roce.dscp"].hint == "add 'dscp' under qos.ecn.roce"


def test_extra_field_hint_without_model_and_alias_suggestion(tmp_path: Path) -> None:
    text = "qos: {classes: []}\nschema_versoin: 1\n"
    assert schema_findings(tmp_path, text, None)["schema_versoin"].hint == "remove it or check spelling"
    with_model = schema_findings(tmp_path, text)["schema_versoin"]
    assert with_model.hint == "did you mean 'schema_version'?"  # the alias, the key users write
    assert (with_model.location.line, with_model.location.column) == (2, 1)


def test_missing_top_level_field_and_misspelled_sibling(tmp_path: Path) -> None:
    found = schema_findings(tmp_path, "qso:\n  classes: []\n")
    assert found["qos"].rule_id == "SCHEMA-missing"
    assert found["qos"].hint == "add 'qos' under the top level ('qso' is written there: a misspelling?)"
    assert found["qso"].rule_id == "SCHEMA-extra" and found["qso"].hint == "did you mean 'qos'?"


class Unnumbered(_Strict):
    kind: Literal["unnumbered"]


class P2p(_Strict):
    kind: Literal["p2p"]
    pool: str


class Links(_Strict):
    links: list[Annotated[Unnumbered | P2p, Field(discriminator="kind")]]


def test_discriminated_union_errors_skip_pydantic_tag_segments(tmp_path: Path) -> None:
    source = load_text(tmp_path, "links:\n  - kind: p2p\n    pol: x\n  - kind: bgp\n  - {}\n")
    with pytest.raises(ValidationError) as info:
        Links.model_validate(source.data)
    found = {f.path: f for f in validation_findings(info.value, source, Links) if f.rule_id != "SCHEMA-missing"}
    assert found["links[0].pol"].hint == "did you mean 'pool'?"  # pydantic's loc was links.0.p2p.pol
    assert (found["links[1]"].location.line, found["links[1]"].location.column) == (4, 11)  # at the bad tag
    assert found["links[1]"].hint == "'kind' must be one of 'unnumbered', 'p2p'"
    missing = [f for f in validation_findings(info.value, source, Links) if f.path == "links[2]"]
    assert missing[0].rule_id == "SCHEMA-missing" and missing[0].location.line == 5


def test_dotted_paths() -> None:
    assert dotted(("qos", "classes", 1, "dscp")) == "qos.classes[1].dscp"
    assert dotted(()) == ""
