"""The rate limiter's arithmetic with a test clock: reservations, continuous refill, waits and headers."""

from __future__ import annotations

import pytest

from suture.workers.simulator.errors import LimitsError
from suture.workers.simulator.limits import RateLimit, RateLimiter, duration_text, parse_limit


class Clock:
    """Monotonic seconds that move only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_a_request_reserves_its_prompt_and_completion_budget(clock: Clock) -> None:
    # Given 60 RPM and 10,000 TPM for one model
    limiter = RateLimiter({"m": RateLimit(60, 10_000)}, clock)
    # When a request of 1,000 prompt tokens with a 2,000-token budget arrives
    admission = limiter.admit("m", 1_000, 2_000)
    # Then it is admitted and both buckets show what it took, with the time to refill them
    assert admission.rejected is None
    assert admission.headers == {
        "x-ratelimit-limit-requests": "60",
        "x-ratelimit-remaining-requests": "59",
        "x-ratelimit-reset-requests": "1s",
        "x-ratelimit-limit-tokens": "10000",
        "x-ratelimit-remaining-tokens": "7000",
        "x-ratelimit-reset-tokens": "18s",
    }


def test_over_the_token_limit_is_refused_until_the_bucket_refills_continuously(clock: Clock) -> None:
    # Given 6,000 TPM (100 tokens a second) and a request that takes most of it
    limiter = RateLimiter({"m": RateLimit(tpm=6_000)}, clock)
    assert limiter.admit("m", 1_000, 4_000).rejected is None
    # When a second request of 3,000 tokens arrives at once, Then it waits for 2,000 more tokens: 20 s
    refused = limiter.admit("m", 1_000, 2_000)
    assert refused.rejected is not None and refused.rejected.status == 429
    assert refused.rejected.code == "rate_limit_exceeded" and refused.rejected.error_type == "tokens"
    assert (refused.headers["retry-after"], refused.headers["retry-after-ms"]) == ("20", "20000")
    assert "Limit 6000, Used 5000, Requested 3000" in refused.rejected.message
    # ...and a refusal takes no tokens: 19.9 s later it is still 10 tokens short, at 20 s it fits
    clock.now += 19.9
    assert limiter.admit("m", 1_000, 2_000).rejected is not None
    clock.now += 0.1
    assert limiter.admit("m", 1_000, 2_000).rejected is None


def test_requests_refill_at_rpm_per_minute_and_refusals_count_against_them(clock: Clock) -> None:
    # Given 2 RPM (one request back every 30 s), both spent
    limiter = RateLimiter({"m": RateLimit(rpm=2)}, clock)
    assert [limiter.admit("m", 10, None).rejected for _ in range(2)] == [None, None]
    # When a client resends every 20 s, Then each refusal spends the refill so far and it never gets in
    for _ in range(3):
        clock.now += 20
        refused = limiter.admit("m", 10, None)
        assert refused.rejected is not None and refused.headers["retry-after"] == "30"
    # ...while a client that waits the 30 s retry-after is admitted
    clock.now += 30
    assert limiter.admit("m", 10, None).rejected is None


def test_a_request_larger_than_the_tpm_limit_is_refused_without_a_retry_after(clock: Clock) -> None:
    limiter = RateLimiter({"m": RateLimit(100, 1_000)}, clock)
    refused = limiter.admit("m", 600, 600)
    assert refused.rejected is not None and "Request too large" in refused.rejected.message
    assert "retry-after" not in refused.headers


def test_unreserved_completion_tokens_are_charged_when_served(clock: Clock) -> None:
    # Given a request with no completion budget admitted on its prompt alone
    limiter = RateLimiter({"m": RateLimit(tpm=6_000)}, clock)
    assert limiter.admit("m", 1_000, None).headers["x-ratelimit-remaining-tokens"] == "5000"
    # When its 4,500 completion tokens are charged
    limiter.charge("m", 4_500)
    # Then the next request sees only what is left
    assert limiter.admit("m", 100, None).headers["x-ratelimit-remaining-tokens"] == "400"


def test_unlimited_models_are_admitted_without_headers(clock: Clock) -> None:
    limiter = RateLimiter({"m": RateLimit(1, 1)}, clock)
    assert limiter.admit("other", 10**9, 10**9).headers == {}
    assert limiter.snapshot() == {"m": {"rpm": 1, "tpm": 1, "remaining_requests": 1, "remaining_tokens": 1}}


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (0.0201, "21ms"),
        (0.999, "999ms"),
        (1, "1s"),
        (1.5, "1.5s"),
        (360, "6m0s"),
        (3661, "1h1m1s"),
    ],
)
def test_durations_are_written_as_openai_writes_them(seconds: float, text: str) -> None:
    assert duration_text(seconds) == text


@pytest.mark.parametrize(
    ("text", "model", "limit"),
    [
        ("gpt-5-nano=5000/2000000", "gpt-5-nano", RateLimit(5000, 2_000_000)),
        ("gpt-5=500/", "gpt-5", RateLimit(500, None)),
        ("gpt-5-mini=/40000", "gpt-5-mini", RateLimit(None, 40_000)),
    ],
)
def test_limits_parse_from_model_rpm_tpm(text: str, model: str, limit: RateLimit) -> None:
    assert parse_limit(text) == (model, limit)


@pytest.mark.parametrize("text", ["gpt-5", "gpt-5=/", "gpt-5=fast/1", "=1/1", "gpt-5=0/10", "gpt-5=1/2/3"])
def test_unusable_limits_are_refused(text: str) -> None:
    with pytest.raises(LimitsError):
        parse_limit(text)
