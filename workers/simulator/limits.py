"""Per-model request and token rate limits, metered the way OpenAI meters an organisation's model.

OpenAI limits each model by requests per minute (RPM) and tokens per minute (TPM); its guide says
the limits are enforced over shorter periods too (60,000 RPM may be enforced as 1,000 requests a
second), which is how a continuously refilled token bucket behaves. The exact algorithm here:

- a limited model has a request bucket (capacity RPM, refilled at RPM/60 per second) and a token
  bucket (capacity TPM, refilled at TPM/60 per second); both start full and refill continuously
  on the wall clock (``time.monotonic``; the latency scale never stretches a window, so a test can
  use small limits and a real run meters like the provider);
- a request costs 1 request and its *reservation*: the prompt tokens (``tokens.prompt_tokens``,
  the count usage reports) plus ``max_completion_tokens``, taken when it arrives and never
  refunded (OpenAI counts the reservation, not what the reply used). A request without
  ``max_completion_tokens`` reserves its prompt only, and the completion tokens it is served are
  charged when the reply is made (the bucket may go into debt, at most one capacity deep);
- it is admitted only if both buckets hold its cost; then both are debited. Otherwise it gets
  HTTP 429 ``rate_limit_exceeded`` and still spends one request (floored at 0): OpenAI's guide
  says unsuccessful requests count toward the per-minute limit, so resending in a tight loop
  does not get through, while a client that waits ``retry-after`` does;
- a reservation larger than TPM can never be admitted: 429 "Request too large", no retry-after.

Headers, on every reply of a limited model (as OpenAI sends them): ``x-ratelimit-limit-requests``
/ ``-tokens`` (the limits), ``x-ratelimit-remaining-requests`` / ``-tokens`` (whole units left
after this request), ``x-ratelimit-reset-requests`` / ``-tokens`` (time until the bucket is full
again, in OpenAI's duration format: ``6m0s``, ``1.5s``, ``20ms``); a 429 adds ``retry-after``
(whole seconds, rounded up) and ``retry-after-ms``: the time until both buckets hold this cost.
A model with only one of the two limits reports only that one's headers.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from suture.workers.simulator.errors import LimitsError, RequestRejected

_LIMIT_TEXT = re.compile(r"^(?P<model>[^=\s]+)=(?P<rpm>\d*)/(?P<tpm>\d*)$")


@dataclass(frozen=True)
class RateLimit:
    """One model's limits: requests and tokens per minute (None: that one is not limited)."""

    rpm: int | None = None
    tpm: int | None = None

    def __post_init__(self) -> None:
        for name, value in (("rpm", self.rpm), ("tpm", self.tpm)):
            if value is not None and value < 1:
                raise LimitsError(f"{name} must be at least 1, got {value}")


def parse_limit(text: str) -> tuple[str, RateLimit]:
    """``"gpt-5-nano=5000/2000000"`` -> the model and its limits; an empty side is not limited.

    Raises ``LimitsError`` naming the expected form.
    """
    match = _LIMIT_TEXT.match(text.strip())
    if match is None or not (match["rpm"] or match["tpm"]):
        raise LimitsError(f"a limit is MODEL=RPM/TPM (e.g. gpt-5-nano=5000/2000000), got {text!r}")
    rpm, tpm = (int(match[k]) if match[k] else None for k in ("rpm", "tpm"))
    return match["model"], RateLimit(rpm, tpm)


def duration_text(seconds: float) -> str:
    """A duration as OpenAI's rate-limit headers write it (Go's format): ``6m0s``, ``1.5s``, ``20ms``."""
    ms = max(0, math.ceil(seconds * 1000))
    if ms == 0:
        return "0s"
    if ms < 1000:
        return f"{ms}ms"
    minutes, ms = divmod(ms, 60_000)
    hours, minutes = divmod(minutes, 60)
    text = f"{ms / 1000:.3f}".rstrip("0").rstrip(".") + "s"
    if hours:
        return f"{hours}h{minutes}m{text}"
    return f"{minutes}m{text}" if minutes else text


class Bucket:
    """A continuously refilled bucket: ``capacity`` units, refilled at ``capacity`` per minute."""

    __slots__ = ("capacity", "level", "rate_per_s", "updated_s")

    def __init__(self, capacity: int, now_s: float) -> None:
        self.capacity = capacity
        self.rate_per_s = capacity / 60.0
        self.level = float(capacity)
        self.updated_s = now_s

    def refill(self, now_s: float) -> None:
        """Add what the time since the last update refilled, up to the capacity."""
        elapsed = max(0.0, now_s - self.updated_s)
        self.level = min(float(self.capacity), self.level + elapsed * self.rate_per_s)
        self.updated_s = now_s

    def wait_s(self, cost: float) -> float:
        """Seconds until the bucket holds ``cost`` (0 if it does now)."""
        return max(0.0, (cost - self.level) / self.rate_per_s)

    def reset_s(self) -> float:
        """Seconds until the bucket is full again."""
        return (self.capacity - self.level) / self.rate_per_s

    def take(self, cost: float, floor: float) -> None:
        """Debit ``cost``, never below ``floor``."""
        self.level = max(floor, self.level - cost)


@dataclass(frozen=True)
class Admission:
    """The limiter's answer: the headers to send, and the 429 to answer with if not admitted."""

    headers: dict[str, str]
    rejected: RequestRejected | None = None


class _ModelBuckets:
    def __init__(self, limit: RateLimit, now_s: float) -> None:
        self.limit = limit
        self.requests = Bucket(limit.rpm, now_s) if limit.rpm else None
        self.tokens = Bucket(limit.tpm, now_s) if limit.tpm else None

    def short_of(self, cost: int) -> str | None:
        """Which limit refuses a request of ``cost`` tokens now: "too_large", "requests", "tokens", or
        None."""
        if self.tokens is not None and cost > self.tokens.capacity:
            return "too_large"
        if self.requests is not None and self.requests.level < 1:
            return "requests"
        if self.tokens is not None and self.tokens.level < cost:
            return "tokens"
        return None

    def headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        for kind, bucket in (("requests", self.requests), ("tokens", self.tokens)):
            if bucket is not None:
                headers[f"x-ratelimit-limit-{kind}"] = str(bucket.capacity)
                headers[f"x-ratelimit-remaining-{kind}"] = str(max(0, math.floor(bucket.level)))
                headers[f"x-ratelimit-reset-{kind}"] = duration_text(bucket.reset_s())
        return headers


class RateLimiter:
    """Admits or refuses requests per model; models without a limit are always admitted.

    ``clock`` returns monotonic seconds; tests pass their own to refill without waiting. One lock
    makes check-and-debit atomic across threads.
    """

    def __init__(
        self, limits: Mapping[str, RateLimit] | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        now = clock()
        self._models = {model: _ModelBuckets(limit, now) for model, limit in (limits or {}).items()}

    def __repr__(self) -> str:
        return f"RateLimiter({ {m: b.limit for m, b in self._models.items()} })"

    @property
    def limits(self) -> dict[str, RateLimit]:
        """The configured limits, by model."""
        return {model: buckets.limit for model, buckets in self._models.items()}

    def admit(self, model: str, prompt_tokens: int, max_completion_tokens: int | None) -> Admission:
        """Debit a request of ``model`` reserving its prompt and completion budget, or refuse it."""
        buckets = self._models.get(model)
        if buckets is None:
            return Admission({})
        cost = prompt_tokens + (max_completion_tokens or 0)
        with self._lock:
            now = self._clock()
            for bucket in (buckets.requests, buckets.tokens):
                if bucket is not None:
                    bucket.refill(now)
            short = buckets.short_of(cost)
            if buckets.requests is not None:
                buckets.requests.take(1, floor=0.0)  # refused or not, a request counts
            if short is None and buckets.tokens is not None:
                buckets.tokens.take(cost, floor=-buckets.tokens.capacity)
            headers = buckets.headers()
            if short is None:
                return Admission(headers)
            rejected, retry = _refusal(model, buckets, cost, short)
        return Admission({**headers, **retry}, rejected)

    def charge(self, model: str, tokens: int) -> None:
        """Charge tokens a request did not reserve (its completion, when it sent no budget)."""
        buckets = self._models.get(model)
        if buckets is None or buckets.tokens is None or tokens <= 0:
            return
        with self._lock:
            buckets.tokens.refill(self._clock())
            buckets.tokens.take(tokens, floor=-buckets.tokens.capacity)

    def snapshot(self) -> dict[str, dict[str, int | None]]:
        """Each limited model's limits and what is left of them now (for ``GET /v1/_stats``)."""
        out: dict[str, dict[str, int | None]] = {}
        with self._lock:
            now = self._clock()
            for model, buckets in self._models.items():
                left: dict[str, int | None] = {"rpm": buckets.limit.rpm, "tpm": buckets.limit.tpm}
                for kind, bucket in (("requests", buckets.requests), ("tokens", buckets.tokens)):
                    if bucket is not None:
                        bucket.refill(now)
                    left[f"remaining_{kind}"] = None if bucket is None else max(0, math.floor(bucket.level))
                out[model] = left
        return out


def _refusal(
    model: str, buckets: _ModelBuckets, cost: int, short: str
) -> tuple[RequestRejected, dict[str, str]]:
    """The 429 for a request of ``cost`` tokens that ``short`` refused, and its retry headers."""
    tokens = buckets.tokens
    if short == "too_large" and tokens is not None:
        message = (
            f"Request too large for {model} (suture simulator) on tokens per min (TPM): "
            f"Limit {tokens.capacity}, Requested {cost}. The input or output tokens must be reduced "
            "in order to run successfully."
        )
        return RequestRejected(429, "rate_limit_exceeded", message, error_type="tokens"), {}
    waits = [0.0]  # until both buckets hold this request again (after this refusal's debit)
    if buckets.requests is not None:
        waits.append(buckets.requests.wait_s(1))
    if tokens is not None:
        waits.append(tokens.wait_s(cost))
    wait = max(waits)
    bucket = buckets.requests if short == "requests" else tokens
    assert bucket is not None  # short names a bucket that exists
    unit, want = ("RPM", 1) if short == "requests" else ("TPM", cost)
    used = bucket.capacity - max(0, math.floor(bucket.level))
    message = (
        f"Rate limit reached for {model} (suture simulator) on {short} per min ({unit}): "
        f"Limit {bucket.capacity}, Used {used}, Requested {want}. "
        f"Please try again in {duration_text(wait)}."
    )
    retry = {
        "retry-after": str(max(1, math.ceil(wait))),
        "retry-after-ms": str(max(1, math.ceil(wait * 1000))),
    }
    return RequestRejected(429, "rate_limit_exceeded", message, error_type=short), retry
