"""The intent schema's field descriptions come from field docstrings, read when a schema is generated
(netfab.cli.schema_cmd), and must be what pydantic's use_attribute_docstrings gave: the rules it follows
(explicit descriptions win, aliases, inherited and redeclared fields) and its own extractor's reading of the
same classes. (docs/intent.schema.json's golden test covers the real intent.)"""

from __future__ import annotations

from pydantic import Field

from netfab.cli.schema_cmd import _generator, field_docstrings
from netfab.intent.base import IntentModel


class _Leaf(IntentModel):
    """A nested model."""

    speed: int = 400
    """Gbit/s of each port.

        Indented second paragraph, as cleandoc dedents it."""
    note: str = Field("x", description="explicit wins over the docstring")
    """not used: the Field's description is"""
    plain: int = 0


class _Root(IntentModel):
    leaf: _Leaf = _Leaf()
    """The leaf tier."""
    name_: str = Field("f", alias="name")
    """Under its alias."""


class _Child(_Root):
    leaf: _Leaf = _Leaf(speed=800)  # redeclared without a docstring: no description, as pydantic has it
    extra: int = 1
    """Only on the child."""


def test_descriptions_match_pydantic_use_attribute_docstrings() -> None:
    ours = _Child.model_json_schema(by_alias=True, schema_generator=_generator())
    props = ours["properties"]
    leaf = ours["$defs"]["_Leaf"]["properties"]
    assert leaf["speed"]["description"] == "Gbit/s of each port.\n\nIndented second paragraph, as cleandoc dedents it."
    assert leaf["note"]["description"] == "explicit wins over the docstring"
    assert "description" not in leaf["plain"]
    assert props["name"]["description"] == "Under its alias."
    assert props["extra"]["description"] == "Only on the child."
    assert "description" not in props["leaf"]  # redeclared on the child without one
    assert ours["$defs"]["_Leaf"]["description"] == "A nested model."


def test_field_docstrings_reads_the_classes_as_pydantic_does() -> None:
    # pydantic's own extractor (private, so only a test oracle), from the classes' source as inspect finds it.
    from pydantic._internal._docs_extraction import extract_docstrings_from_cls

    for cls in (_Leaf, _Root, _Child):
        assert field_docstrings(cls) == extract_docstrings_from_cls(cls, use_inspect=True)


def test_without_source_there_are_no_descriptions_and_no_crash() -> None:
    made = type("Made", (IntentModel,), {"__annotations__": {"a": int}, "a": 1, "__module__": __name__})
    assert field_docstrings(made) == {}
    schema = made.model_json_schema(by_alias=True, schema_generator=_generator())
    assert "description" not in schema["properties"]["a"]
