"""Base for every intent model: frozen (the intent is a fact, not a workspace) and strict about keys."""

from pydantic import BaseModel, ConfigDict


class IntentModel(BaseModel):
    # Field docstrings are the schema's descriptions; netfab.cli.schema_cmd reads them when a schema is asked
    # for (use_attribute_docstrings=True here read every model's source at import, in every command).
    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)
