"""The provider's per-model limits as settings: the moved ``worker.rate_limits_rpm`` key, refused clearly.

The limits themselves are ``Settings.limits`` (``{MODEL: ModelRateLimit(rpm, tpm)}``, the shape the
simulator's ``simulator.limits`` uses too); this module holds what the settings check about them.
"""

from __future__ import annotations

from typing import Any

MOVED_KEY = "rate_limits_rpm"


def moved_rate_limits(data: Any) -> Any:
    """Refuse ``worker.rate_limits_rpm`` with one line saying what to write instead (a ``before``
    validator)."""
    if isinstance(data, dict) and MOVED_KEY in data:
        old = data[MOVED_KEY]
        example = (
            ", ".join(f"{model}: {{rpm: {rpm}}}" for model, rpm in old.items())
            if isinstance(old, dict) and old
            else "gpt-5-nano: {rpm: 5000, tpm: 2000000}"
        )
        raise ValueError(
            f"worker.{MOVED_KEY} was replaced by the top-level key limits; write limits: {{{example}}}"
        )
    return data
