"""The model table's entries: what one model costs, how much one request may hold, which efforts it takes.

Settings (``prices:`` in config/defaults.yaml) hold one ``ModelPrice`` per model; ``suture.config.settings``
re-exports both names.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ReasoningEffort = Literal["minimal", "low", "medium", "high"]


class ModelPrice(BaseModel):
    """One model of the model table: USD prices per one million tokens, and its context window."""

    model_config = ConfigDict(extra="forbid")  # a misspelled key is an error, as in every settings section

    input_per_1m_usd: float = Field(ge=0)
    cached_input_per_1m_usd: float = Field(ge=0)
    output_per_1m_usd: float = Field(ge=0)
    # The share of these prices a call through the Batch API pays (OpenAI: half, on input and output).
    batch_price_ratio: float = Field(0.5, gt=0, le=1)
    context_tokens: int | None = Field(None, ge=1)  # input + output tokens of one request; None: unknown
