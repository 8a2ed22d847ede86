"""How many completion tokens a call asks for: what its contract expects of the reply, not the ceiling.

The provider counts a call's ``max_completion_tokens`` against its tokens-per-minute limit when the
request arrives (OpenAI does), so the cap decides how many calls a minute holds. A call asks for
its contract's expected visible reply (``Contract.reply_tokens``) times a margin, plus a reasoning
allowance for its model and effort, never more than the ceiling (``client.max_completion_tokens``).
A reply cut off by that cap is sent again once with the cap doubled (``doubled_cap``). Pure functions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from suture.config.models import ReasoningEffort
from suture.config.settings import ReasoningAllowance

# The API's default effort when a call names none (OpenAI: medium).
DEFAULT_EFFORT: ReasoningEffort = "medium"


def reasoning_allowance(
    expected_tokens: int,
    by_effort: Mapping[ReasoningEffort, ReasoningAllowance],
    by_model: Mapping[str, Mapping[ReasoningEffort, ReasoningAllowance]],
    model: str,
    effort: ReasoningEffort | None,
) -> int:
    """The reasoning tokens allowed on top of a visible reply of ``expected_tokens``: the model's own
    allowance
    for the effort, else the effort's (``ratio`` x the reply, at least ``min_tokens``); none known: 0."""
    chosen: ReasoningEffort = effort or DEFAULT_EFFORT
    allowance = by_model.get(model, {}).get(chosen) or by_effort.get(chosen)
    if allowance is None:
        return 0
    return max(allowance.min_tokens, math.ceil(allowance.ratio * max(0, expected_tokens)))


def completion_cap(expected_tokens: int | None, *, margin: float, reasoning_tokens: int, ceiling: int) -> int:
    """``max_completion_tokens`` for a reply expected to take ``expected_tokens`` visible tokens (None: the
    ceiling)."""
    if expected_tokens is None:
        return ceiling
    return max(1, min(ceiling, math.ceil(max(0, expected_tokens) * margin) + max(0, reasoning_tokens)))


def doubled_cap(cap: int, ceiling: int) -> int | None:
    """The cap a reply cut off at ``cap`` is sent again with: twice it, at most the ceiling (None: no
    higher cap)."""
    return min(2 * cap, ceiling) if cap < ceiling else None
