"""The budgeted caller against the simulated provider's own RPM/TPM meter, through the real SDK and Redis.

The simulator (a simulation of OpenAI's metering) answers 429 with OpenAI's headers; suture's budget,
shared in Redis, should keep calls under it, defer (never sleep) when it must wait, and learn from
the provider's headers and 429s.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx2
import pytest
import redis

from suture.config.settings import ClientSettings, Settings
from suture.config.simulator_sections import ModelRateLimit
from suture.tasks.calls import ModelCall
from suture.workers.model.budget import Budget, Reservation
from suture.workers.model.budget_math import Remaining
from suture.workers.model.budgeted_caller import BudgetedCaller, CallDeferred
from suture.workers.model.client import ModelClient
from suture.workers.simulator.limits import RateLimit

MODEL = "gpt-5-nano"
DOC = "Photosynthesis turns light into chemical energy in the chloroplasts of green plant cells."


def _call(max_completion_tokens: int = 2_000) -> ModelCall:
    return ModelCall(
        model=MODEL,
        messages=[{"role": "user", "content": f"Write exactly 2 questions.\n<document>\n{DOC}\n</document>"}],
        schema_name="quiz",
        json_schema={"type": "object", "properties": {"questions": {"type": "array"}}},
        max_completion_tokens=max_completion_tokens,
    )


_CLIENTS: list[ModelClient] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _CLIENTS:
        _CLIENTS.pop().close()


def _caller(base_url: str, redis_url: str, limits: dict[str, ModelRateLimit]) -> BudgetedCaller:
    settings = Settings(
        openai_base_url=base_url,
        openai_api_key="sk-test-not-a-real-key",
        limits=limits,
        client=ClientSettings(timeout_s=10, call_budget_s=20, transport_max_retries=3, backoff_base_s=0.01),
    )
    budget = Budget(redis.Redis.from_url(redis_url), limits, prefix=f"c{uuid.uuid4().hex}")
    _CLIENTS.append(ModelClient(settings))
    return BudgetedCaller(settings, budget, _CLIENTS[-1])


def _stats(base_url: str) -> dict[str, Any]:
    return dict(httpx2.get(f"{base_url}/_stats", timeout=10).json())


def test_within_the_providers_limits_the_budget_defers_before_any_429(
    simulator: Callable[..., str], redis_url: str
) -> None:
    # Given a provider metering 5,000 tokens a minute, and suture told the same
    url = simulator("perfect", limits={MODEL: RateLimit(tpm=5_000)})
    caller = _caller(url, redis_url, {MODEL: ModelRateLimit(tpm=5_000)})
    # When calls reserving ~2,050 tokens each are made until one must wait
    replies, deferred = [], None
    for _ in range(5):
        try:
            replies.append(caller(_call()))
        except CallDeferred as exc:
            deferred = exc
            break
    # Then two went through, the third was deferred by the budget (tens of seconds), and the provider
    # never had to refuse one
    assert [r.error for r in replies] == [None, None]
    assert deferred is not None and deferred.reason == "budget" and 5 < deferred.wait_s < 60
    assert _stats(url)["rate_limited"] == 0


def test_a_provider_429_defers_the_call_and_holds_the_model_for_its_retry_after(
    simulator: Callable[..., str], redis_url: str
) -> None:
    # Given a provider allowing 2 requests a minute, both spent by another client; suture told 100
    url = simulator("perfect", limits={MODEL: RateLimit(rpm=2)})
    other = _caller(url, redis_url, {})
    assert [other(_call()).error for _ in range(2)] == [None, None]
    caller = _caller(url, redis_url, {MODEL: ModelRateLimit(rpm=100)})
    # When suture's call gets the provider's 429
    started = time.monotonic()
    with pytest.raises(CallDeferred) as caught:
        caller(_call())
    # Then it is deferred at once (no sleep, no retry) for the provider's retry-after (~30 s)...
    assert time.monotonic() - started < 2
    assert caught.value.reason == "provider HTTP 429" and 20 < caught.value.wait_s <= 31
    assert _stats(url)["rate_limited"] == 1
    # ...and the next call of the model is held by the shared budget, without asking the provider
    with pytest.raises(CallDeferred) as held:
        caller(_call())
    assert held.value.reason == "budget" and held.value.wait_s > 20
    assert _stats(url)["requests"] == 3


def test_a_model_suture_does_not_limit_still_defers_on_a_429(
    simulator: Callable[..., str], redis_url: str
) -> None:
    # Given a provider allowing 1 request a minute, and no limit configured in suture
    url = simulator("perfect", limits={MODEL: RateLimit(rpm=1)})
    caller = _caller(url, redis_url, {})
    assert caller(_call()).error is None
    # When the second call is refused / Then it is deferred, not slept on nor retried
    with pytest.raises(CallDeferred, match="provider HTTP 429"):
        caller(_call())
    assert _stats(url)["requests"] == 2


def test_the_providers_headers_correct_a_budget_another_client_drained(
    simulator: Callable[..., str], redis_url: str
) -> None:
    # Given a provider metering 10,000 tokens a minute, 8,000 of them spent by another client
    url = simulator("perfect", limits={MODEL: RateLimit(tpm=10_000)})
    other = _caller(url, redis_url, {})
    assert other(_call(max_completion_tokens=7_900)).error is None
    caller = _caller(url, redis_url, {MODEL: ModelRateLimit(tpm=10_000)})
    # When suture, which believes its budget full, makes one small call and reads the headers
    assert caller(_call(max_completion_tokens=100)).error is None
    # Then its next 2,000-token call waits for the refill instead of meeting a 429
    with pytest.raises(CallDeferred) as caught:
        caller(_call())
    assert caught.value.reason == "budget"
    assert _stats(url)["rate_limited"] == 0


class _RedisGoneAfterReserving(Budget):
    """A real budget whose Redis goes away once the call has been reserved."""

    def settle(self, reservation: Reservation, charged: int) -> None:
        raise redis.exceptions.ConnectionError("Redis went away")

    def correct(self, model: str, remaining: Remaining) -> None:
        raise redis.exceptions.ConnectionError("Redis went away")


def test_a_redis_outage_after_the_call_never_loses_the_reply(
    simulator: Callable[..., str], redis_url: str
) -> None:
    # Given a budget whose Redis is gone once the call was reserved and sent
    url = simulator("perfect", limits={MODEL: RateLimit(tpm=100_000)})
    limits = {MODEL: ModelRateLimit(tpm=100_000)}
    settings = Settings(openai_base_url=url, openai_api_key="sk-test-not-a-real-key", limits=limits)
    budget = _RedisGoneAfterReserving(redis.Redis.from_url(redis_url), limits, prefix=uuid.uuid4().hex)
    _CLIENTS.append(ModelClient(settings))
    # When the call is made / Then its reply comes back (no exception: the step is not re-run, the
    # call not made twice), and the provider saw one request
    assert BudgetedCaller(settings, budget, _CLIENTS[-1])(_call()).error is None
    assert _stats(url)["requests"] == 1


def test_an_interactive_call_takes_the_budget_a_bulk_call_must_leave(
    simulator: Callable[..., str], redis_url: str
) -> None:
    # Given 10,000 TPM (10 % kept for interactive calls: dispatch.interactive_budget_share) and a
    # bulk call that spent about 2,050 of it
    url = simulator("perfect", limits={MODEL: RateLimit(tpm=10_000)})
    caller = _caller(url, redis_url, {MODEL: ModelRateLimit(tpm=10_000)})
    first = caller(_call(max_completion_tokens=2_000).model_copy(update={"priority": "bulk"}))
    assert first.error is None
    # When bulk calls reserving 3,500 tokens are made until one is deferred
    bulk = _call(max_completion_tokens=3_500).model_copy(update={"priority": "bulk"})
    with pytest.raises(CallDeferred) as deferred:
        for _ in range(3):
            caller(bulk)
    # ...and then an interactive call of the same size is made
    reply = caller(_call(max_completion_tokens=3_500))
    # Then the bulk call waited for budget while the interactive one was sent, inside the provider's limit
    assert deferred.value.reason == "budget"
    assert reply.error is None
    assert _stats(url)["rate_limited"] == 0
