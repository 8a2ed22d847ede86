"""OpenAI-style prompt caching in the simulator: cached_tokens in usage, per model, expiring, priced lower."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx2
import pytest
import yaml
from openai import OpenAI

from suture.config.settings import DEFAULTS_FILE, ClientSettings, ModelPrice, Settings
from suture.tasks.calls import ModelCall
from suture.workers.model.client import ModelClient
from suture.workers.simulator import PromptCache
from suture.workers.simulator.prompt_cache import MAX_LIFETIME_S
from suture.workers.simulator.request import ChatRequest

from .course import PHOTOSYNTHESIS, quiz_format

# Three copies of the course text: ~1,200 prompt tokens, over OpenAI's 1,024-token minimum.
LONG_DOCUMENT = "\n".join([PHOTOSYNTHESIS] * 3)
# An instruction after the document, longer than one 128-token step.
TAIL = "Write exactly 3 questions, each with exactly 4 options." + " Quote the document." * 30
IDLE_S = 300.0


class Clock:
    """A monotonic clock moved by hand, so cache entries expire without waiting minutes."""

    def __init__(self) -> None:
        self.now_s = 1000.0

    def __call__(self) -> float:
        return self.now_s


def _messages(document: str = LONG_DOCUMENT, tail: str | None = None) -> list[dict[str, str]]:
    """System prompt and document first (the shared prefix), then an optional instruction that differs."""
    messages = [
        {"role": "system", "content": "You write quizzes."},
        {"role": "user", "content": f"<document>\n{document}\n</document>"},
    ]
    if tail is not None:
        messages.append({"role": "user", "content": tail})
    return messages


def _usage(
    base_url: str, messages: list[dict[str, str]], model: str = "gpt-5-nano", cache_key: str | None = None
) -> tuple[int, int]:
    """(prompt_tokens, cached_tokens) of one request through the openai SDK."""
    client = OpenAI(base_url=base_url, api_key="unused", max_retries=0, timeout=10)
    extra = {} if cache_key is None else {"prompt_cache_key": cache_key}
    reply = client.chat.completions.create(
        model=model, messages=messages, response_format=quiz_format(), reasoning_effort="minimal", **extra
    )  # type: ignore[call-overload]
    assert reply.usage is not None and reply.usage.prompt_tokens_details is not None
    return reply.usage.prompt_tokens, reply.usage.prompt_tokens_details.cached_tokens or 0


def _request(messages: list[dict[str, Any]], model: str = "gpt-5-nano", schema: str = "quiz") -> ChatRequest:
    return ChatRequest(model, messages, schema, {"type": "object"}, None, None, None)


def test_a_repeated_long_prefix_is_cached_in_128_token_steps_from_1024(simulator: Callable[..., str]) -> None:
    # Given a simulator that has seen nothing yet
    base_url = simulator()
    # When a long prompt is sent, then the same system prompt and document with an instruction after them
    first_prompt, first_cached = _usage(base_url, _messages())
    second_prompt, second_cached = _usage(base_url, _messages(tail=TAIL))
    _, third_cached = _usage(base_url, _messages(tail=TAIL))
    # Then the first reports nothing cached; the second, the shared prefix in whole 128-token steps
    assert first_prompt >= 1024 and first_cached == 0
    assert second_cached % 128 == 0 and 1024 <= second_cached <= second_prompt
    assert second_cached == first_prompt // 128 * 128
    # ...and an exact repeat hits the longest prefix seen, which now includes the instruction
    assert third_cached == second_prompt // 128 * 128 > second_cached


def test_a_prompt_under_1024_tokens_never_reports_cached_tokens(simulator: Callable[..., str]) -> None:
    # Given a prompt of a few hundred tokens, When it is sent three times
    base_url = simulator()
    usages = [_usage(base_url, _messages(PHOTOSYNTHESIS)) for _ in range(3)]
    # Then none of the replies reports a cached token
    assert usages[0][0] < 1024
    assert [cached for _, cached in usages] == [0, 0, 0]


def test_another_model_does_not_share_the_cache(simulator: Callable[..., str]) -> None:
    # Given gpt-5-nano has processed a long prompt
    base_url = simulator()
    _usage(base_url, _messages(), model="gpt-5-nano")
    # When gpt-5-mini gets the same prompt twice
    _, mini_first = _usage(base_url, _messages(), model="gpt-5-mini")
    _, mini_second = _usage(base_url, _messages(), model="gpt-5-mini")
    # Then mini starts cold and caches its own copy
    assert mini_first == 0 and mini_second >= 1024


def test_requests_share_cached_prefixes_only_under_the_same_prompt_cache_key(
    simulator: Callable[..., str],
) -> None:
    # Given job A's long prompt was processed under its prompt_cache_key
    base_url = simulator()
    _usage(base_url, _messages(), cache_key="job-a")
    # When job B sends the same prompt under its own key, and job A sends it again
    _, other_job = _usage(base_url, _messages(), cache_key="job-b")
    _, same_job = _usage(base_url, _messages(), cache_key="job-a")
    # Then only job A's repeat is served from the cache
    assert other_job == 0 and same_job >= 1024


def test_a_prompt_cache_key_that_is_not_a_string_is_a_400(simulator: Callable[..., str]) -> None:
    # Given a request whose prompt_cache_key is a number, When it is sent, Then the API refuses it
    response = httpx2.post(
        f"{simulator()}/chat/completions",
        json={"model": "gpt-5-nano", "messages": _messages(), "prompt_cache_key": 7},
        timeout=10,
    )
    assert response.status_code == 400
    assert "prompt_cache_key" in response.json()["error"]["message"]


def test_an_idle_prefix_expires_and_a_used_one_stays(simulator: Callable[..., str]) -> None:
    # Given a simulator whose cache runs on a hand-moved clock
    clock = Clock()
    base_url = simulator(prompt_cache=PromptCache(idle_s=IDLE_S, clock=clock))
    _usage(base_url, _messages())
    # When the prompt comes back just before the idle time, twice (together longer than the idle time)
    clock.now_s += IDLE_S - 1
    _, warm = _usage(base_url, _messages())
    clock.now_s += IDLE_S - 1
    _, still_warm = _usage(base_url, _messages())
    # ...and then once after a full idle time
    clock.now_s += IDLE_S
    _, cold = _usage(base_url, _messages())
    # Then each use kept it alive, and idleness expired it
    assert warm >= 1024 and still_warm >= 1024
    assert cold == 0


def test_a_prefix_is_forgotten_an_hour_after_it_was_cached_however_busy() -> None:
    # Given a prefix used every 200 s, so it never goes idle
    clock = Clock()
    cache = PromptCache(idle_s=IDLE_S, clock=clock)
    request = _request(_messages())
    assert cache.serve(request) == 0
    hits = []
    while clock.now_s + 200 < 1000.0 + MAX_LIFETIME_S:
        clock.now_s += 200
        hits.append(cache.serve(request))
    # When the hour since it was first cached is over
    clock.now_s += 200
    # Then it was a hit all along, and is a miss now
    assert hits and all(h >= 1024 for h in hits)
    assert cache.serve(request) == 0


def test_a_full_cache_drops_the_least_recently_used_prefixes() -> None:
    # Given a cache with room for the boundaries of exactly one long prompt
    first, second = _request(_messages()), _request(_messages(LONG_DOCUMENT.upper()))
    room = PromptCache()
    room.serve(first)
    cache = PromptCache(max_entries=len(room))
    # When a second long prompt is processed after the first
    assert cache.serve(first) == 0 and cache.serve(second) == 0
    # Then the second is still cached and the first was dropped to make room
    assert cache.serve(second) >= 1024
    assert cache.serve(first) == 0
    assert len(cache) == len(room)


def test_max_entries_zero_turns_caching_off() -> None:
    cache = PromptCache(max_entries=0)
    request = _request(_messages())
    assert [cache.serve(request) for _ in range(3)] == [0, 0, 0]


@pytest.mark.parametrize(
    "variant",
    [
        _request([{**m, "role": "user"} for m in _messages()]),  # same text, another role
        _request(_messages(), schema="quiz_slice"),  # another structured-output schema
    ],
    ids=["role", "schema"],
)
def test_roles_and_the_schema_are_part_of_the_prefix(variant: ChatRequest) -> None:
    # Given a cache that has processed the long prompt
    cache = PromptCache()
    cache.serve(_request(_messages()))
    # When the same text arrives with another role or schema, Then it is a different prefix
    assert cache.serve(variant) == 0


def test_cached_counts_are_reproducible_for_a_request_sequence(simulator: Callable[..., str]) -> None:
    # Given two fresh simulators, When they get the same sequence of prompts
    sequence = [_messages(), _messages(tail="a"), _messages(PHOTOSYNTHESIS), _messages(tail="b"), _messages()]

    def cached(base_url: str) -> list[int]:
        return [_usage(base_url, messages)[1] for messages in sequence]

    first, second = cached(simulator(seed=3)), cached(simulator(seed=3))
    # Then they report the same cached counts, hits included
    assert first == second
    assert first[0] == 0 and min(first[1], first[3], first[4]) >= 1024


def test_concurrent_identical_prompts_miss_exactly_once() -> None:
    # Given threads switched as often as the interpreter allows (so an unguarded lookup-then-store races)
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        misses = [_misses_of_a_burst(_request(_messages(f"{i} {LONG_DOCUMENT}"))) for i in range(30)]
    finally:
        sys.setswitchinterval(previous)
    # Then every new prompt was computed by exactly one thread and served from the cache to the rest
    assert misses == [1] * 30


def _misses_of_a_burst(request: ChatRequest, threads: int = 8) -> int:
    """How many of ``threads`` threads, released at once, got 0 cached tokens for the same prompt."""
    cache = PromptCache()
    start = threading.Barrier(threads)

    def serve(_: int) -> int:
        start.wait()
        return cache.serve(request)

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(serve, range(threads))).count(0)


def test_concurrent_requests_to_the_server_miss_exactly_once(simulator: Callable[..., str]) -> None:
    # Given a simulator, When 40 identical long requests arrive at once
    base_url = simulator()
    body = {"model": "gpt-5-nano", "messages": _messages(), "reasoning_effort": "minimal"}

    async def burst() -> list[int]:
        async with httpx2.AsyncClient(timeout=30) as client:
            replies = await asyncio.gather(
                *(client.post(f"{base_url}/chat/completions", json=body) for _ in range(40))
            )
        return [r.json()["usage"]["prompt_tokens_details"]["cached_tokens"] for r in replies]

    cached = asyncio.run(burst())
    # Then one computed the prompt and the other 39 report the cached prefix
    assert cached.count(0) == 1
    assert len(set(cached) - {0}) == 1 and max(cached) >= 1024


def test_suture_client_prices_a_repeated_long_prompt_at_the_cached_rate(
    simulator: Callable[..., str],
) -> None:
    # Given suture's model client with the packaged prices, against the simulator
    prices = {
        name: ModelPrice(**price)
        for name, price in yaml.safe_load(DEFAULTS_FILE.read_text())["prices"].items()
    }
    settings = Settings(
        openai_base_url=simulator(),
        openai_api_key="sk-test",
        prices=prices,
        client=ClientSettings(timeout_s=10, transport_max_retries=0),
    )
    call = ModelCall(
        model="gpt-5-nano",
        messages=_messages(tail="Write exactly 2 questions, each with exactly 4 options."),
        schema_name="quiz",
        json_schema={"type": "object", "properties": {"questions": {"type": "array"}}},
        reasoning_effort="low",
    )
    client = ModelClient(settings)
    # When the same long prompt is sent twice
    first, second = client.call(call), client.call(call)
    # Then the repeat reports cached input tokens and costs less, by exactly the cached-input discount
    assert first.usage.cached_input_tokens == 0 and second.usage.cached_input_tokens >= 1024
    assert second.usage.output_tokens == first.usage.output_tokens
    assert first.cost_usd is not None and second.cost_usd is not None
    price = prices["gpt-5-nano"]
    discount_usd = (
        second.usage.cached_input_tokens * (price.input_per_1m_usd - price.cached_input_per_1m_usd) / 1e6
    )
    assert second.cost_usd < first.cost_usd
    assert second.cost_usd == pytest.approx(first.cost_usd - discount_usd)
    assert second.simulated
