"""The simulator meters like the provider, through the unmodified openai SDK over real HTTP.

Per-model RPM/TPM limits answer 429 with OpenAI's headers, replies carry ``x-ratelimit-*``,
``GET /v1/_stats`` counts what was done, and thousands of slow requests can be in flight at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import aiohttp
import httpx2
import openai
import pytest
from openai import OpenAI

from suture.workers.simulator import PROFILES
from suture.workers.simulator.limits import RateLimit
from suture.workers.simulator.tokens import prompt_tokens

from .course import quiz_format, quiz_messages

RATE_HEADERS = (
    "x-ratelimit-limit-requests",
    "x-ratelimit-remaining-requests",
    "x-ratelimit-reset-requests",
    "x-ratelimit-limit-tokens",
    "x-ratelimit-remaining-tokens",
    "x-ratelimit-reset-tokens",
)


def _client(base_url: str) -> OpenAI:
    return OpenAI(base_url=base_url, api_key="unused", max_retries=0, timeout=30)


def _ask(client: OpenAI, budget: int | None = 2_000, **overrides: Any) -> Any:
    arguments: dict[str, Any] = {
        "model": "gpt-5-nano",
        "messages": quiz_messages(questions=2),
        "response_format": quiz_format(),
        "reasoning_effort": "minimal",
        **overrides,
    }
    if budget is not None:
        arguments["max_completion_tokens"] = budget
    return client.chat.completions.with_raw_response.create(**arguments)


def _stats(base_url: str) -> dict[str, Any]:
    response = httpx2.get(f"{base_url}/_stats", timeout=10)
    assert response.status_code == 200
    return dict(response.json())


def test_over_the_request_limit_the_sdk_gets_429_with_openais_headers(simulator: Callable[..., str]) -> None:
    # Given gpt-5-nano limited to 3 requests a minute (latency scale 0 does not shorten the window)
    base_url = simulator(limits={"gpt-5-nano": RateLimit(rpm=3, tpm=1_000_000)})
    client = _client(base_url)
    # When four requests arrive at once
    replies = [_ask(client) for _ in range(3)]
    with pytest.raises(openai.RateLimitError) as caught:
        _ask(client)
    # Then the first three carry the limits and what is left, counting down
    assert [r.headers["x-ratelimit-remaining-requests"] for r in replies] == ["2", "1", "0"]
    assert all(set(RATE_HEADERS) <= set(r.headers) for r in replies)
    assert replies[0].headers["x-ratelimit-limit-requests"] == "3"
    assert replies[0].headers["x-ratelimit-reset-requests"] == "20s"
    # ...and the fourth is OpenAI's 429: rate_limit_exceeded, wait one refill (20 s of wall clock)
    error = caught.value
    assert error.code == "rate_limit_exceeded"
    assert error.response.headers["retry-after"] == "20"
    assert 19_900 <= int(error.response.headers["retry-after-ms"]) <= 20_000
    assert error.response.headers["x-ratelimit-remaining-requests"] == "0"
    assert error.response.headers["x-suture-simulated"] == "true"


def test_tokens_are_reserved_at_request_time_and_refill_continuously(simulator: Callable[..., str]) -> None:
    # Given 60,000 TPM (1,000 tokens a second) and requests reserving prompt + 2,000 completion tokens
    base_url = simulator(limits={"gpt-5-nano": RateLimit(tpm=60_000)})
    client = _client(base_url)
    cost = prompt_tokens(quiz_messages(questions=2)) + 2_000
    # When requests are sent until one is refused
    served = 0
    started = time.monotonic()
    while True:
        try:
            reply = _ask(client)
        except openai.RateLimitError as exc:
            refused = exc
            break
        served += 1
        remaining = int(reply.headers["x-ratelimit-remaining-tokens"])
    # Then the reservations, not the (smaller) replies, used the budget up: what is left is the budget
    # less the reservations, plus at most what refilled while they were sent (1 token a millisecond;
    # a loaded machine takes longer to send them, so the bound is the time taken, not a constant)
    refilled_max = (time.monotonic() - started) * 1_000
    assert 60_000 // cost <= served <= (60_000 + refilled_max) // cost
    assert 60_000 - served * cost <= remaining <= 60_000 - served * cost + refilled_max
    assert refused.body["type"] == "tokens"  # type: ignore[index]
    # ...and after the refill time the server asked for, the next request is admitted
    time.sleep(int(refused.response.headers["retry-after-ms"]) / 1000 + 0.05)
    assert _ask(client).headers["x-ratelimit-limit-tokens"] == "60000"


def test_a_request_without_a_budget_reserves_its_prompt_and_is_charged_its_reply(
    simulator: Callable[..., str],
) -> None:
    # Given 60,000 TPM (1,000 tokens a second refill) and two requests sent with no completion budget
    base_url = simulator(limits={"gpt-5-nano": RateLimit(tpm=60_000)})
    client = _client(base_url)
    usage = _ask(client, budget=None).parse().usage
    second = _ask(client, budget=None)
    # Then the first reply's completion tokens were charged after it: the second sees them spent
    # (less what refilled between the two requests, a few tens of milliseconds)
    spent = 60_000 - int(second.headers["x-ratelimit-remaining-tokens"])
    charged = usage.prompt_tokens * 2 + usage.completion_tokens
    assert charged - 100 < spent <= charged


def test_stats_count_requests_429s_and_tokens_per_model_and_in_total(simulator: Callable[..., str]) -> None:
    # Given a limit of 2 requests a minute on gpt-5-nano and none on gpt-5-mini
    base_url = simulator(limits={"gpt-5-nano": RateLimit(rpm=2)})
    client = _client(base_url)
    # When 3 nano requests, 1 mini request and 1 malformed request are sent
    usages = [_ask(client).parse().usage for _ in range(2)]
    with pytest.raises(openai.RateLimitError):
        _ask(client)
    usages.append(_ask(client, model="gpt-5-mini").parse().usage)
    httpx2.post(f"{base_url}/chat/completions", content=b"{not json", timeout=10)
    stats = _stats(base_url)
    # Then every request is counted, the 429 against its model, and the tokens served add up
    nano, mini = stats["models"]["gpt-5-nano"], stats["models"]["gpt-5-mini"]
    served = sum(u.prompt_tokens + u.completion_tokens for u in usages)
    assert (stats["requests"], stats["rate_limited"], stats["tokens"]) == (5, 1, served)
    assert (nano["requests"], nano["rate_limited"], nano["limited"], nano["completed"]) == (3, 1, 1, 2)
    assert (mini["requests"], mini["rate_limited"], mini["completed"]) == (1, 0, 1)
    assert nano["tokens"] == sum(u.prompt_tokens + u.completion_tokens for u in usages[:2])
    assert stats["limits"]["gpt-5-nano"]["rpm"] == 2 and stats["simulated"] is True


def test_chaos_429s_are_counted_and_carry_the_limit_headers(simulator: Callable[..., str]) -> None:
    profile = PROFILES["chaos"].with_faults(**{f: 0.0 for f in _FAULTS}).with_faults(rate_limited=1.0)
    base_url = simulator(profile, limits={"gpt-5-nano": RateLimit(rpm=100)})
    with pytest.raises(openai.RateLimitError) as caught:
        _ask(_client(base_url))
    assert caught.value.response.headers["x-ratelimit-limit-requests"] == "100"
    stats = _stats(base_url)["models"]["gpt-5-nano"]
    assert (stats["rate_limited"], stats["limited"]) == (1, 0)


_FAULTS = (
    "malformed_json",
    "truncated",
    "refusal",
    "empty",
    "rate_limited",
    "server_error",
    "slow",
    "dropped_connection",
)


def test_a_thousand_slow_requests_are_in_flight_at_once(simulator: Callable[..., str]) -> None:
    # Given a model whose every reply takes 4 s
    slow = {
        n: replace(t, time_to_first_token_ms=4_000.0, per_output_token_ms=0.0)
        for n, t in PROFILES["realistic"].models.items()
    }
    base_url = simulator(replace(PROFILES["realistic"], models=slow), latency_scale=1.0)
    body = {"model": "gpt-5-nano", "messages": [{"role": "user", "content": "Write exactly 1 questions"}]}

    async def burst() -> list[int]:
        connector = aiohttp.TCPConnector(limit=1_100)
        async with aiohttp.ClientSession(
            connector=connector, timeout=aiohttp.ClientTimeout(total=60)
        ) as session:

            async def one() -> int:
                async with session.post(f"{base_url}/chat/completions", json=body) as response:
                    await response.read()
                    return response.status

            statuses = list(await asyncio.gather(*(one() for _ in range(1_000))))
        # aiohttp's graceful close: the connector's transports finish closing on the next loop turns;
        # without this wait, asyncio.run may close the loop first and leave sockets to the collector.
        await asyncio.sleep(0.25)
        return statuses

    # When 1,000 are sent at once
    statuses = asyncio.run(burst())
    # Then all are answered, and the server had all 1,000 in flight together
    assert statuses == [200] * 1_000
    assert _stats(base_url)["peak_in_flight"] == 1_000


def test_more_than_max_in_flight_get_503(simulator: Callable[..., str]) -> None:
    # Given a server that answers at most 2 requests at once, each taking 2 s
    slow = {n: replace(t, time_to_first_token_ms=2_000.0) for n, t in PROFILES["realistic"].models.items()}
    base_url = simulator(replace(PROFILES["realistic"], models=slow), latency_scale=1.0, max_in_flight=2)
    body = {"model": "gpt-5-nano", "messages": [{"role": "user", "content": "Write exactly 1 questions"}]}

    async def burst() -> list[int]:
        async with httpx2.AsyncClient(timeout=30) as client:

            async def later() -> httpx2.Response:
                await asyncio.sleep(0.5)
                return await client.post(f"{base_url}/chat/completions", json=body)

            calls = [client.post(f"{base_url}/chat/completions", json=body) for _ in range(2)]
            return sorted(r.status_code for r in await asyncio.gather(*calls, later()))

    # When a third arrives while two are in flight, Then it is refused as overloaded
    assert asyncio.run(burst()) == [200, 200, 503]
