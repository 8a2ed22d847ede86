"""The unmodified openai SDK against the simulator over real HTTP: every response kind and error."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import httpx2
import openai
import pytest
from openai import OpenAI

from suture.workers.simulator import PROFILES
from suture.workers.simulator.faults import REFUSAL_TEXT

from .course import quiz_format, quiz_messages


def _client(base_url: str, api_key: str = "unused") -> OpenAI:
    return OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=10)


def _ask(client: OpenAI, **overrides: Any) -> Any:
    arguments: dict[str, Any] = {
        "model": "gpt-5-mini",
        "messages": quiz_messages(questions=3),
        "response_format": quiz_format(),
    }
    return client.chat.completions.with_raw_response.create(**{**arguments, **overrides})


def test_models_listing_is_labelled_a_simulation(simulator: Callable[..., str]) -> None:
    # Given a simulator, When the SDK lists models
    models = _client(simulator()).models.list()
    # Then exactly the three simulated models are owned by the simulator
    assert sorted(m.id for m in models) == ["gpt-5", "gpt-5-mini", "gpt-5-nano"]
    assert {m.owned_by for m in models} == {"suture-simulator"}


def test_a_normal_reply_has_usage_reasoning_tokens_and_the_simulation_header(
    simulator: Callable[..., str],
) -> None:
    # Given a realistic simulator, When a quiz is requested with reasoning effort
    raw = _ask(_client(simulator()), reasoning_effort="high")
    reply = raw.parse()
    # Then the reply is valid JSON, labelled simulated, with token counts of ~4 chars per token
    content = reply.choices[0].message.content
    assert raw.headers["x-suture-simulated"] == "true"
    assert len(json.loads(content)["questions"]) == 3
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage.completion_tokens_details.reasoning_tokens > 0
    visible = reply.usage.completion_tokens - reply.usage.completion_tokens_details.reasoning_tokens
    assert visible == -(-len(content) // 4)


def test_a_small_token_budget_truncates_with_finish_reason_length(simulator: Callable[..., str]) -> None:
    # Given a budget far smaller than a quiz, When a quiz is requested
    reply = _ask(_client(simulator()), max_completion_tokens=50, reasoning_effort="minimal").parse()
    # Then the text is cut off and the finish reason says so
    assert reply.choices[0].finish_reason == "length"
    assert reply.usage.completion_tokens <= 50


def _parses(text: str | None) -> bool:
    try:
        json.loads(text or "")
    except ValueError:
        return False
    return True


@pytest.mark.parametrize(
    ("fault", "parses", "finish", "refusal"),
    [
        ("malformed_json", False, "stop", None),
        ("truncated", False, "length", None),
        ("refusal", False, "stop", REFUSAL_TEXT),
        ("empty", False, "stop", None),
        ("slow", True, "stop", None),
    ],
)
def test_chaos_content_faults_reach_the_sdk_as_openai_shapes_them(
    simulator: Callable[..., str], fault: str, parses: bool, finish: str, refusal: str | None
) -> None:
    # Given a chaos profile where every reply has this fault
    profile = PROFILES["chaos"].with_faults(**dict.fromkeys(_FAULTS, 0.0)).with_faults(**{fault: 1.0})
    # When the SDK asks
    reply = _ask(_client(simulator(profile))).parse()
    # Then the fault shows exactly where OpenAI would put it
    message = reply.choices[0].message
    assert (_parses(message.content), reply.choices[0].finish_reason, message.refusal) == (
        parses,
        finish,
        refusal,
    )
    assert (message.content == "") == (fault == "empty")


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


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ("rate_limited", openai.RateLimitError),
        ("server_error", openai.InternalServerError),
        ("dropped_connection", openai.APIConnectionError),
    ],
)
def test_chaos_transport_faults_raise_the_sdk_errors(
    simulator: Callable[..., str], fault: str, error: type[Exception]
) -> None:
    # Given every request gets this transport fault
    profile = PROFILES["chaos"].with_faults(**{f: 0.0 for f in _FAULTS}).with_faults(**{fault: 1.0})
    # When the SDK asks, Then it raises the error the real API would cause
    with pytest.raises(error) as caught:
        _ask(_client(simulator(profile, latency_scale=0.5)))
    if fault == "rate_limited":
        assert caught.value.response.headers["retry-after"] == "1"  # type: ignore[attr-defined]


def test_slow_fault_adds_scaled_latency(simulator: Callable[..., str]) -> None:
    # Given slow faults of 5 s at latency scale 0.01 (50 ms) on every request
    profile = PROFILES["chaos"].with_faults(**{f: 0.0 for f in _FAULTS}).with_faults(slow=1.0)
    raw = _ask(_client(simulator(profile, latency_scale=0.01)), reasoning_effort="minimal")
    # Then the simulated processing time includes the extra delay
    assert int(raw.headers["openai-processing-ms"]) >= 50


def test_chaos_faults_are_reproducible_for_a_seed(simulator: Callable[..., str]) -> None:
    # Given two chaos simulators with the same seed, When the same request sequence is sent
    def outcomes(base_url: str) -> list[str]:
        client, seen = _client(base_url), []
        for i in range(20):
            try:
                reply = _ask(client, messages=quiz_messages(questions=2, extra=f" {i % 5}")).parse()
                seen.append(f"{reply.choices[0].finish_reason}:{reply.choices[0].message.content}")
            except openai.APIError as exc:
                seen.append(type(exc).__name__)
        return seen

    first, second = outcomes(simulator("chaos", seed=5)), outcomes(simulator("chaos", seed=5))
    # Then the faults (and answers) are the same, and some faults did happen
    assert first == second
    assert len(set(first)) > 5


def test_unknown_model_is_404_model_not_found(simulator: Callable[..., str]) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        _ask(_client(simulator()), model="gpt-4o")
    assert caught.value.code == "model_not_found"


def test_required_key_rejects_a_wrong_key_without_echoing_it(simulator: Callable[..., str]) -> None:
    # Given a simulator that requires a key
    base_url = simulator(api_key="sk-right-key")
    # When the wrong key is used, Then 401 without the key in the message; the right key works
    with pytest.raises(openai.AuthenticationError) as caught:
        _ask(_client(base_url, "sk-wrong-key"))
    assert "sk-wrong-key" not in str(caught.value)
    assert _ask(_client(base_url, "sk-right-key")).parse().choices[0].message.content


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{not json", "could not parse the JSON body"),
        (b'{"model": "gpt-5-mini", "messages": []}', "messages"),
        (b'{"messages": [{"role": "user", "content": "hi"}]}', "model parameter"),
        (
            b'{"model": "gpt-5-mini", "messages": [{"role": "user"}], "reasoning_effort": "max"}',
            "reasoning_effort",
        ),
    ],
)
def test_invalid_requests_get_400_in_openai_error_shape(
    simulator: Callable[..., str], content: bytes, message: str
) -> None:
    # Given a malformed request body, When it is posted
    response = httpx2.post(f"{simulator()}/chat/completions", content=content, timeout=10)
    # Then the answer is a 400 with OpenAI's error body
    assert response.status_code == 400
    assert message in response.json()["error"]["message"]


def test_hundreds_of_slow_requests_are_in_flight_at_once(simulator: Callable[..., str]) -> None:
    # Given a realistic simulator where one small request takes ~1 s
    base_url = simulator(latency_scale=1.0)
    body = {
        "model": "gpt-5-nano",
        "messages": [{"role": "user", "content": "Write exactly 1 questions"}],
        "reasoning_effort": "minimal",
    }

    async def burst() -> list[int]:
        async with httpx2.AsyncClient(limits=httpx2.Limits(max_connections=300), timeout=30) as client:
            responses = await asyncio.gather(
                *(client.post(f"{base_url}/chat/completions", json=body) for _ in range(300))
            )
        return [r.status_code for r in responses]

    started = time.monotonic()
    statuses = asyncio.run(burst())
    # Then all 300 are answered concurrently, far sooner than one after another
    assert statuses == [200] * 300
    assert time.monotonic() - started < 30


def test_non_quiz_schema_gets_a_schema_shaped_placeholder(simulator: Callable[..., str]) -> None:
    # Given a request for some other structured output
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "level": {"enum": ["low", "high"]},
            "score": {"type": "integer"},
        },
    }
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": "profile", "schema": schema, "strict": True},
    }
    messages = [{"role": "user", "content": "Describe the user."}]
    # When it is answered
    reply = _ask(_client(simulator()), messages=messages, response_format=response_format).parse()
    # Then the answer has the schema's shape
    value = json.loads(reply.choices[0].message.content)
    assert set(value) == {"name", "tags", "level", "score"}
    assert (
        isinstance(value["tags"], list)
        and value["level"] in ("low", "high")
        and isinstance(value["score"], int)
    )
