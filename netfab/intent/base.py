"""Base for every intent model: frozen (the intent is a fact, not a workspace) and strict about keys."""

from pydantic import BaseModel, ConfigDict


class IntentModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True, use_attribute_docstrings=True)
