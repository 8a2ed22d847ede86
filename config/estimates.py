"""Settings for estimates made before any model is called (`suture batch --dry-run`, `--budget-usd`).

Part of the one settings object (``suture.config.settings.Settings.estimate``); documented in
config/defaults.yaml under ``estimate``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ModelSpeed(BaseModel):
    """How fast one model answers, for estimates only: time to the first token and output rate."""

    model_config = ConfigDict(extra="forbid")

    first_token_s: float = Field(ge=0)
    output_tokens_per_s: float = Field(gt=0)


class EstimateSettings(BaseModel):
    """What `suture batch --dry-run` and `--budget-usd` expect a section to cost and take (no model call)."""

    model_config = ConfigDict(extra="forbid")

    # Output (visible + reasoning) tokens a first full attempt writes per question, at low effort.
    output_tokens_per_question: int = Field(250, ge=1)
    model_speeds: dict[str, ModelSpeed] = Field(default_factory=dict)
