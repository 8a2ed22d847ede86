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
    # A whole `suture batch`'s wall time (stack start, queues, the workers' CPU included) / its model-time
    # estimate; used until batches on this machine measured their own (``timings_file``).
    wall_time_ratio: float = Field(1.52, gt=0)
    # Where each finished batch records its measured ratio (None: $XDG_STATE_HOME/suture/timings.jsonl);
    # the median of the latest ones replaces ``wall_time_ratio``. learn_wall_time: false to not record.
    timings_file: str | None = None
    learn_wall_time: bool = True
