"""What a model call cost in USD, from the configured per-model price table.

A model missing from the table has an unknown cost (None), never a silent zero.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from suture.config.settings import ModelPrice
from suture.tasks.calls import Usage

_SNAPSHOT_SUFFIX = re.compile(r"-\d{4}-\d{2}-\d{2}$")
PER_MILLION = 1_000_000


def price_of(model: str, prices: Mapping[str, ModelPrice]) -> ModelPrice | None:
    """The price of a model, also for a dated snapshot name such as ``gpt-5-mini-2025-08-07``."""
    return prices.get(model) or prices.get(_SNAPSHOT_SUFFIX.sub("", model))


def cost_usd(model: str, usage: Usage, prices: Mapping[str, ModelPrice]) -> float | None:
    """Cost of the usage: uncached and cached input, and output (reasoning tokens are output)."""
    price = price_of(model, prices)
    if price is None:
        return None
    cached = min(usage.cached_input_tokens, usage.input_tokens)
    return (
        (usage.input_tokens - cached) * price.input_per_1m_usd
        + cached * price.cached_input_per_1m_usd
        + usage.output_tokens * price.output_per_1m_usd
    ) / PER_MILLION
