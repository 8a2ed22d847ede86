"""Chaos faults: which one a request gets (seeded) and what it does to a reply's content."""

from __future__ import annotations

import random
from dataclasses import fields
from typing import Literal

from suture.workers.simulator.profiles import FaultRates

Fault = Literal[
    "malformed_json",
    "truncated",
    "refusal",
    "empty",
    "rate_limited",
    "server_error",
    "slow",
    "dropped_connection",
]
CONTENT_FAULTS: frozenset[str] = frozenset({"malformed_json", "truncated", "refusal", "empty"})
REFUSAL_TEXT = "I'm sorry, but I can't help with that request. (suture simulator: simulated refusal)"


def draw_fault(rates: FaultRates, rng: random.Random) -> Fault | None:
    """One fault at the configured shares, or None for a normal reply."""
    roll = rng.random()
    for spec in fields(rates):
        roll -= getattr(rates, spec.name)
        if roll < 0:
            return spec.name  # type: ignore[return-value]
    return None


def spoil(fault: Fault | None, text: str, rng: random.Random) -> tuple[str | None, str | None, str]:
    """The reply's (content, refusal, finish_reason) after a content fault (or none)."""
    if fault == "malformed_json":
        cut = rng.randrange(1, max(2, len(text) - 1))
        return text[:cut] + ',"' + text[cut:], None, "stop"
    if fault == "truncated":
        return text[: max(1, len(text) * rng.randint(20, 80) // 100)], None, "length"
    if fault == "refusal":
        return None, REFUSAL_TEXT, "stop"
    if fault == "empty":
        return "", None, "stop"
    return text, None, "stop"
