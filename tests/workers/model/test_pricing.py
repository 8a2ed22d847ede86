"""Cost of a call from the price table: cached input, reasoning as output, unknown never zero."""

from __future__ import annotations

import pytest

from suture.config.settings import ModelPrice
from suture.tasks.calls import Usage
from suture.workers.model.pricing import cost_usd

PRICES = {
    "gpt-5": ModelPrice(input_per_1m_usd=1.25, cached_input_per_1m_usd=0.125, output_per_1m_usd=10.0),
    "gpt-5-nano": ModelPrice(input_per_1m_usd=0.05, cached_input_per_1m_usd=0.005, output_per_1m_usd=0.40),
}


@pytest.mark.parametrize(
    ("model", "usage", "expected"),
    [
        ("gpt-5", Usage(input_tokens=1_000_000), 1.25),
        ("gpt-5", Usage(input_tokens=1_000_000, cached_input_tokens=1_000_000), 0.125),
        ("gpt-5", Usage(output_tokens=1_000_000, reasoning_tokens=400_000), 10.0),
        (
            "gpt-5-nano",
            Usage(input_tokens=2000, cached_input_tokens=1000, output_tokens=500),
            0.00005 + 0.000005 + 0.0002,
        ),
        ("gpt-5-nano-2025-08-07", Usage(output_tokens=1_000_000), 0.40),
        ("gpt-5", Usage(), 0.0),
    ],
)
def test_cost_of_priced_models(model: str, usage: Usage, expected: float) -> None:
    # Given a usage, When it is priced, Then each token class is charged at its own rate
    assert cost_usd(model, usage, PRICES) == pytest.approx(expected)


@pytest.mark.parametrize("model", ["llama-3-70b", "gpt-5-nano-latest", ""])
def test_unknown_model_cost_is_none_not_zero(model: str) -> None:
    assert cost_usd(model, Usage(input_tokens=10, output_tokens=10), PRICES) is None
