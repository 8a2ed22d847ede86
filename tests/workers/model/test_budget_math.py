"""The budget's arithmetic: what a call reserves, what it cost, what headers say, how long to defer."""

from __future__ import annotations

import math

import pytest

from suture.tasks.calls import ModelCall, Usage
from suture.workers.model.budget_math import (
    MARGIN_S,
    SPREAD,
    Remaining,
    aged,
    charged_tokens,
    countdown_cap_s,
    countdown_s,
    prompt_estimate,
    remaining_of,
)
from suture.workers.simulator.tokens import prompt_tokens


def _call(text: str, max_completion_tokens: int | None = None) -> ModelCall:
    messages = [{"role": "system", "content": "Write a quiz."}, {"role": "user", "content": text}]
    return ModelCall(
        model="m",
        messages=messages,
        schema_name="quiz",
        json_schema={"type": "object"},
        max_completion_tokens=max_completion_tokens,
    )


def test_the_prompt_estimate_never_undercounts_the_simulated_providers_count() -> None:
    # Given prompts of several sizes / When estimated / Then at least what the provider (simulated) counts
    for size in (0, 1, 7, 400, 12_345):
        messages = _call("x" * size).messages
        assert prompt_tokens(messages) <= prompt_estimate(messages) <= prompt_tokens(messages) + 8


def test_a_settled_call_costs_the_real_prompt_plus_the_reserved_completion() -> None:
    # Given a reservation of 1,100 (guess 100 + 1,000) / When usage says 90 prompt and 40 completion tokens
    # Then the cost is 1,090: the provider meters max_completion_tokens, not what was served
    assert charged_tokens(Usage(input_tokens=90, output_tokens=40), 1_100, 100) == 1_090
    # ...and a reply without usage keeps its reservation
    assert charged_tokens(Usage(), 1_100, 100) == 1_100


def test_remaining_headers_are_read_and_junk_ignored() -> None:
    # Given headers from an untrusted server / Then digits count, anything else is unknown
    headers = {"x-ratelimit-remaining-requests": " 12 ", "x-ratelimit-remaining-tokens": "-5"}
    assert remaining_of(headers) == Remaining(requests=12, tokens=None)
    assert not remaining_of({}).known


def test_what_was_left_grows_by_the_refill_since_it_was_said_capped_at_the_limit() -> None:
    # Given 100 requests and 1,000 tokens left 3 s ago at 600 RPM / 60,000 TPM
    # When aged / Then +30 requests and +3,000 tokens; never above the limit
    assert aged(Remaining(100, 1_000), 3.0, 600, 60_000) == Remaining(130, 4_000)
    assert aged(Remaining(590, 59_000), 3.0, 600, 60_000) == Remaining(600, 60_000)
    assert aged(Remaining(None, 5), 1.0, None, None) == Remaining(None, 5)


def test_a_countdown_is_the_wait_a_margin_and_a_little_spread_capped() -> None:
    # Given a 4 s wait / When drawn at 0 and at the top / Then 4 s + the margin, up to 5 % more
    assert countdown_s(4.0, 60.0, 0.0) == pytest.approx(4.0 + MARGIN_S)
    assert countdown_s(4.0, 60.0, 1.0) == pytest.approx(4.0 * (1 + SPREAD) + MARGIN_S)
    # ...a long wait stops at the cap, and none is negative
    assert countdown_s(400.0, 60.0, 0.9) == 60.0
    assert countdown_s(-1.0, 60.0, 0.5) == 0.0
    # ...and the cap is half the shorter of the visibility timeout and the stall time
    assert countdown_cap_s(3600.0, 600.0) == 300.0
    assert math.isclose(countdown_cap_s(12.0, 15.0), 6.0)
