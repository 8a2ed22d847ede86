"""The arithmetic of a model's request and token budget, as pure functions (no Redis, no clock).

What a call costs before it is sent (as OpenAI counts it: one request, its prompt's tokens and its
``max_completion_tokens``), what it cost once the reply is in, what a reply's
``x-ratelimit-remaining-*`` headers say is left (the ``reset`` headers say the same from the other
end, time until full, so they are not read), and how long a deferred call waits before it tries
again. The shared state these feed is ``suture.workers.model.budget`` (one Lua script on Redis' clock).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from suture.tasks.calls import Usage

CHARS_PER_TOKEN = 4
# Each message costs a few tokens of framing beyond its text (role, separators), as OpenAI counts.
MESSAGE_OVERHEAD_TOKENS = 4


def prompt_estimate(messages: Sequence[Mapping[str, Any]]) -> int:
    """Tokens a prompt will be counted as, estimated from its text (about four characters a token)."""
    chars = sum(len(json.dumps(message.get("content"))) for message in messages)
    return math.ceil(chars / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS * len(messages)


def charged_tokens(usage: Usage, reserved: int, prompt_guess: int, metering: str = "reserved") -> int:
    """What a finished call cost the provider's token limit, by how the provider meters (``client.metering``).

    ``reserved`` (OpenAI): a request is metered by its prompt plus ``max_completion_tokens`` when it
    arrives, not by the completion served, so only the prompt part of the estimate is corrected by
    the usage (measured on the simulator, which meters as OpenAI documents it: its remaining-tokens
    header never rises after a reply). ``served``: the prompt and the completion tokens the reply
    used. A reply without usage (0 prompt tokens) keeps the reservation as it was.
    """
    if usage.input_tokens <= 0:
        return reserved
    if metering == "served":
        return usage.input_tokens + usage.output_tokens
    return reserved - prompt_guess + usage.input_tokens


@dataclass(frozen=True)
class Remaining:
    """What a reply's headers say is left of a model's limits (None: not said)."""

    requests: int | None = None
    tokens: int | None = None

    @property
    def known(self) -> bool:
        """True if the headers said anything."""
        return self.requests is not None or self.tokens is not None


def remaining_of(headers: Mapping[str, str]) -> Remaining:
    """The ``x-ratelimit-remaining-requests`` / ``-tokens`` of a reply (untrusted: non-numbers ignored)."""
    return Remaining(
        requests=_count(headers.get("x-ratelimit-remaining-requests")),
        tokens=_count(headers.get("x-ratelimit-remaining-tokens")),
    )


def _count(value: str | None) -> int | None:
    if value is None or not value.strip().isdigit():
        return None
    return int(value.strip())


# A deferred call comes back this much after its slot (and up to SPREAD of its wait later): early,
# its tokens are not there yet and it is sent to the back of the queue; late costs nothing.
MARGIN_S = 0.05
SPREAD = 0.05


def countdown_s(wait_s: float, cap_s: float, draw: float) -> float:
    """How long a deferred call waits: its slot's wait, a margin, up to SPREAD more (``draw`` in [0, 1)).

    Capped below the broker's visibility timeout (a held message past it is delivered twice) and
    the watchdog's stall time (``countdown_cap_s``).
    """
    return max(0.0, min(cap_s, wait_s * (1.0 + SPREAD * draw) + MARGIN_S))


def countdown_cap_s(visibility_timeout_s: float, stall_s: float) -> float:
    """The longest countdown a deferred task may be published with: half the shorter of the two."""
    return min(visibility_timeout_s, stall_s) / 2


def aged(remaining: Remaining, age_s: float, rpm: int | None, tpm: int | None) -> Remaining:
    """What is left now, at most, given what was left ``age_s`` ago: plus what refilled since.

    The provider writes its headers when the request arrives and the reply comes back a call's
    latency later; lowering the shared budget to the bare figure would under-use the limit by a
    latency's worth of refill. Plus the refill, it is still never above the provider's truth.
    """
    age_s = max(0.0, age_s)

    def grown(left: int | None, per_minute: int | None) -> int | None:
        if left is None or not per_minute:
            return left
        return min(per_minute, left + math.floor(age_s * per_minute / 60))

    return Remaining(grown(remaining.requests, rpm), grown(remaining.tokens, tpm))
