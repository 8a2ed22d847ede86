"""suture's model client over real HTTP: scripted protocol corner cases, the simulator, and secrets."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

import pytest

from suture.config.settings import ClientSettings, ModelPrice, Settings
from suture.tasks.calls import ModelCall, ModelReply
from suture.workers.model import client as model_client
from suture.workers.model.client import ModelClient, get_model_client
from suture.workers.simulator import PROFILES
from tests.fixtures.simulator import Scripted, ScriptedServer, completion_body

PRICES = {
    "gpt-5-mini": ModelPrice(input_per_1m_usd=0.25, cached_input_per_1m_usd=0.025, output_per_1m_usd=2.0)
}
CANARY = "sk-canary-7f3e9b1d5a2c4e6f8091"
QUIZ_DOC = "Photosynthesis turns light into chemical energy in the chloroplasts of green plant cells."


def _settings(
    base_url: str,
    *,
    key: str | None = CANARY,
    max_retries: int = 3,
    timeout_s: float = 10.0,
    call_budget_s: float = 60.0,
) -> Settings:
    return Settings(
        openai_base_url=base_url,
        openai_api_key=key,
        prices=PRICES,
        client=ClientSettings(
            timeout_s=timeout_s,
            call_budget_s=call_budget_s,
            transport_max_retries=max_retries,
            backoff_base_s=0.01,
            backoff_max_s=2.0,
        ),
    )


def _call(model: str = "gpt-5-mini", **kwargs: Any) -> ModelCall:
    return ModelCall(
        model=model,
        messages=[
            {"role": "user", "content": f"Write exactly 2 questions.\n<document>\n{QUIZ_DOC}\n</document>"}
        ],
        schema_name="quiz",
        json_schema={"type": "object", "properties": {"questions": {"type": "array"}}},
        **kwargs,
    )


def _run(
    scripted_server: Callable[[list[Scripted]], ScriptedServer], script: list[Scripted], **kw: Any
) -> tuple[ModelReply, ScriptedServer]:
    server = scripted_server(script)
    return ModelClient(_settings(server.base_url, **kw)).call(_call()), server


OK = Scripted(body=completion_body())
MALFORMED = Scripted(body="this is not json {")


@pytest.mark.parametrize(
    ("script", "text", "finish", "refusal", "retries"),
    [
        ([OK], '{"ok": true}', "stop", None, 0),
        ([Scripted(body=completion_body(None, refusal="I can't help."))], None, "stop", "I can't help.", 0),
        ([Scripted(body=completion_body('{"q', finish_reason="length"))], '{"q', "length", None, 0),
        ([Scripted(body=completion_body(""))], "", "stop", None, 0),
        (
            [Scripted(500, {"error": {"message": "boom"}}), Scripted(503, {}), OK],
            '{"ok": true}',
            "stop",
            None,
            2,
        ),
        ([MALFORMED, OK], '{"ok": true}', "stop", None, 1),
        ([Scripted(body={"id": "x", "choices": []}), OK], '{"ok": true}', "stop", None, 1),
        ([Scripted(body=[1, 2]), OK], '{"ok": true}', "stop", None, 1),
        ([Scripted(body={"choices": [{"message": "hi"}]}), OK], '{"ok": true}', "stop", None, 1),
        ([Scripted(body={"choices": [{"message": {"content": 42}}]}), OK], '{"ok": true}', "stop", None, 1),
        ([Scripted(drop=True), OK], '{"ok": true}', "stop", None, 1),
        ([Scripted(delay_s=1.5), OK], '{"ok": true}', "stop", None, 1),
    ],
    ids=[
        "ok",
        "refusal",
        "length",
        "empty",
        "5xx-then-ok",
        "malformed-body",
        "no-choices",
        "body-not-an-object",
        "message-not-an-object",
        "content-not-a-string",
        "dropped",
        "timeout",
    ],
)
def test_replies_map_every_response_kind(
    scripted_server: Callable[[list[Scripted]], ScriptedServer],
    script: list[Scripted],
    text: str | None,
    finish: str,
    refusal: str | None,
    retries: int,
) -> None:
    # Given a server replaying this script, When the client calls once (timeout 1 s)
    reply, _ = _run(scripted_server, script, timeout_s=1.0)
    # Then the reply carries text/refusal/finish, and transport retries are counted apart
    assert (reply.text, reply.finish_reason, reply.refusal, reply.error) == (text, finish, refusal, None)
    assert reply.transport_retries == retries


@pytest.mark.parametrize(
    ("headers", "min_wait_ms"), [({"retry-after": "1"}, 1000), ({"retry-after-ms": "300"}, 300)]
)
def test_429_retry_after_is_honoured_then_success(
    scripted_server: Callable[[list[Scripted]], ScriptedServer], headers: dict[str, str], min_wait_ms: int
) -> None:
    # Given a 429 asking to wait, then a success
    script = [Scripted(429, {"error": {"message": "slow down", "code": "rate_limit_exceeded"}}, headers), OK]
    # When the client calls
    reply, server = _run(scripted_server, script)
    # Then it waited as asked, retried once, and succeeded
    assert reply.text == '{"ok": true}'
    assert reply.transport_retries == 1
    assert reply.latency_ms >= min_wait_ms
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}, "auth"),
        (403, {"error": {"message": "Forbidden"}}, "auth"),
        (400, {"error": {"message": "Invalid schema for response_format"}}, "bad_request"),
        (404, {"error": {"message": "The model does not exist", "code": "model_not_found"}}, "not_found"),
        (429, {"error": {"message": "You exceeded your quota", "code": "insufficient_quota"}}, "unavailable"),
    ],
)
def test_terminal_errors_are_never_retried_and_name_model_and_cause(
    scripted_server: Callable[[list[Scripted]], ScriptedServer], status: int, body: dict[str, Any], kind: str
) -> None:
    # Given a terminal HTTP error, When the client calls
    reply, server = _run(scripted_server, [Scripted(status, body), OK])
    # Then exactly one request was made and the reply names the model, the status and the cause
    assert len(server.requests) == 1
    assert reply.error_kind == kind
    assert reply.text is None
    assert reply.error is not None and "gpt-5-mini" in reply.error and str(status) in reply.error
    assert body["error"]["message"] in reply.error


def test_exhausted_transport_retries_are_unavailable(
    scripted_server: Callable[[list[Scripted]], ScriptedServer],
) -> None:
    # Given a server that keeps failing, When the client calls with 2 retries allowed
    reply, server = _run(scripted_server, [Scripted(502, {})] * 5, max_retries=2)
    # Then it stops after 3 requests and reports the model unavailable
    assert (reply.error_kind, reply.transport_retries, len(server.requests)) == ("unavailable", 2, 3)
    assert "after 2 transport retries" in (reply.error or "")


def test_request_uses_strict_json_schema_and_the_call_options(
    scripted_server: Callable[[list[Scripted]], ScriptedServer],
) -> None:
    # Given a call with reasoning effort, seed and token budget
    server = scripted_server([OK])
    ModelClient(_settings(server.base_url)).call(
        _call(reasoning_effort="low", seed=42, max_completion_tokens=900)
    )
    # Then the request carries them and the strict structured-output format
    sent = server.requests[0]["body"]
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "quiz", "schema": _call().json_schema, "strict": True},
    }
    assert (sent["reasoning_effort"], sent["seed"], sent["max_completion_tokens"]) == ("low", 42, 900)
    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {CANARY}"
    assert "prompt_cache_key" not in sent  # the call has none


@pytest.mark.parametrize(("send", "expected"), [(True, "job-123"), (False, None)])
def test_the_job_id_goes_out_as_the_prompt_cache_key_unless_turned_off(
    scripted_server: Callable[[list[Scripted]], ScriptedServer], send: bool, expected: str | None
) -> None:
    # Given a call keyed by its job, and the setting on or off
    server = scripted_server([OK])
    settings = _settings(server.base_url)
    settings = settings.model_copy(
        update={"client": settings.client.model_copy(update={"send_prompt_cache_key": send})}
    )
    # When the client sends it, Then the body carries OpenAI's prompt_cache_key only when on
    ModelClient(settings).call(_call(cache_key="job-123"))
    assert server.requests[0]["body"].get("prompt_cache_key") == expected


@pytest.mark.parametrize(
    ("model", "cost"), [("gpt-5-mini", (80 * 0.25 + 20 * 0.025 + 50 * 2.0) / 1e6), ("my-llama", None)]
)
def test_usage_and_cost_with_unknown_price_as_none(
    scripted_server: Callable[[list[Scripted]], ScriptedServer], model: str, cost: float | None
) -> None:
    # Given usage of 100 input (20 cached), 50 output (10 reasoning) tokens
    server = scripted_server([OK])
    reply = ModelClient(_settings(server.base_url)).call(_call(model))
    # Then tokens map one to one, and cost is priced, or unknown (None, never 0)
    usage = reply.usage
    assert (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens, usage.reasoning_tokens) == (
        100,
        20,
        50,
        10,
    )
    assert reply.cost_usd == (pytest.approx(cost) if cost is not None else None)


def test_canary_key_appears_in_no_artifact(
    scripted_server: Callable[[list[Scripted]], ScriptedServer], caplog: pytest.LogCaptureFixture
) -> None:
    # Given a hostile server that echoes the key in its error messages, and every logger at DEBUG
    echo = {"error": {"message": f"bad key {CANARY}", "code": "invalid_api_key"}}
    script = [Scripted(500, echo), Scripted(500, echo), Scripted(401, echo)]
    caplog.set_level(logging.DEBUG)
    server = scripted_server(script)
    client = ModelClient(_settings(server.base_url))
    # When the client retries and fails
    reply = client.call(_call())
    # Then the key is in no log record, reply, error text or repr
    artifacts = [caplog.text, *(r.getMessage() for r in caplog.records), reply.model_dump_json(), repr(reply)]
    artifacts += [str(reply.error), repr(client), repr(_settings(server.base_url))]
    assert reply.error_kind == "auth" and reply.transport_retries == 2
    assert "[redacted]" in (reply.error or "")
    assert not [a for a in artifacts if CANARY in a]


def test_against_the_simulator_a_quiz_reply_is_priced_and_valid(simulator: Callable[..., str]) -> None:
    # Given the realistic simulator, When suture's client asks for a quiz
    reply = ModelClient(_settings(simulator())).call(_call(reasoning_effort="low"))
    # Then the reply is JSON with the usage, reasoning tokens and a cost
    assert len(json.loads(reply.text or "")["questions"]) == 2
    assert reply.usage.reasoning_tokens > 0 and reply.cost_usd is not None and reply.cost_usd > 0


def test_against_the_chaos_simulator_transport_faults_are_retried(simulator: Callable[..., str]) -> None:
    # Given the chaos simulator, When the client makes many different calls
    client = ModelClient(_settings(simulator("chaos", seed=1), max_retries=6))
    replies = [client.call(_call(seed=i)) for i in range(60)]
    # Then transport faults were retried away, and content faults reach the caller as replies
    assert sum(r.transport_retries for r in replies) > 0
    assert all(r.error is None for r in replies)
    assert {r.finish_reason for r in replies} >= {"stop", "length"}
    assert any(r.refusal or not _is_json(r.text) for r in replies)


def _is_json(text: str | None) -> bool:
    try:
        json.loads(text or "")
    except ValueError:
        return False
    return True


def test_no_key_and_no_base_url_is_a_clear_auth_error() -> None:
    reply = ModelClient(Settings(openai_base_url=None, openai_api_key=None)).call(_call())
    assert reply.error_kind == "auth" and "OPENAI_API_KEY" in (reply.error or "")


def test_one_client_per_process_recreated_after_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given settings, When the client is fetched twice, Then it is the same object
    settings = _settings("http://127.0.0.1:9/v1")
    first = get_model_client(settings)
    assert get_model_client(settings) is first
    # When the process id changes (a forked worker child), Then a fresh client is made
    monkeypatch.setattr(model_client.os, "getpid", lambda: -1)
    assert get_model_client(settings) is not first


_ALL_FAULTS = (
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
    ("fault", "finish", "refused", "error_kind", "retries"),
    [
        ("malformed_json", "stop", False, None, 0),
        ("truncated", "length", False, None, 0),
        ("refusal", "stop", True, None, 0),
        ("empty", "stop", False, None, 0),
        ("slow", "stop", False, None, 0),
        ("rate_limited", None, False, "unavailable", 1),
        ("server_error", None, False, "unavailable", 1),
        ("dropped_connection", None, False, "unavailable", 1),
    ],
)
def test_every_simulated_fault_maps_to_the_reply(
    simulator: Callable[..., str],
    fault: str,
    finish: str | None,
    refused: bool,
    error_kind: str | None,
    retries: int,
) -> None:
    # Given a simulator where every request gets this fault, and one transport retry allowed
    profile = PROFILES["chaos"].with_faults(**dict.fromkeys(_ALL_FAULTS, 0.0)).with_faults(**{fault: 1.0})
    client = ModelClient(_settings(simulator(profile, latency_scale=0.001), max_retries=1))
    # When suture's client calls
    reply = client.call(_call())
    # Then content faults arrive as reply fields and transport faults as a counted, terminal error
    assert (reply.finish_reason, bool(reply.refusal), reply.error_kind) == (finish, refused, error_kind)
    assert reply.transport_retries == retries


@pytest.mark.parametrize(
    ("model", "key", "kind"), [("gpt-4o", CANARY, "not_found"), ("gpt-5-mini", "sk-wrong", "auth")]
)
def test_simulator_refusals_of_the_request_are_terminal(
    simulator: Callable[..., str], model: str, key: str, kind: str
) -> None:
    # Given a simulator requiring the canary key, When the model is unknown or the key wrong
    client = ModelClient(_settings(simulator(api_key=CANARY), key=key))
    reply = client.call(_call(model))
    # Then the reply is a terminal error of that kind, not retried
    assert (reply.error_kind, reply.transport_retries) == (kind, 0)


def test_replies_say_simulated_only_when_the_endpoint_declares_it(
    simulator: Callable[..., str], scripted_server: Callable[[list[Scripted]], ScriptedServer]
) -> None:
    # Given the simulator (which labels itself) and a scripted server (which does not)
    sim_client = ModelClient(_settings(simulator(profile="perfect", latency_scale=0.0)))
    plain_reply, _ = _run(scripted_server, [OK])
    # When each answers one call
    sim_reply = sim_client.call(_call())
    sim_client.close()
    # Then only the simulator's reply is marked simulated
    assert sim_reply.error is None and sim_reply.simulated is True
    assert sim_client.simulated is True
    assert plain_reply.simulated is False


@pytest.mark.parametrize(
    ("usage", "counts"),
    [
        (None, (0, 0, 0, 0)),
        ({"prompt_tokens": 10, "completion_tokens": 5}, (10, 0, 5, 0)),
        (
            {
                "prompt_tokens": 10,
                "completion_tokens": 5,
                "prompt_tokens_details": {"cached_tokens": 4},
                "completion_tokens_details": {"reasoning_tokens": 3},
            },
            (10, 4, 5, 3),
        ),
        ({"prompt_tokens": "10", "completion_tokens": -1, "prompt_tokens_details": [1]}, (0, 0, 0, 0)),
        ("lots", (0, 0, 0, 0)),
    ],
    ids=["absent", "plain", "details", "wrong-types", "not-an-object"],
)
def test_usage_is_read_defensively(
    scripted_server: Callable[[list[Scripted]], ScriptedServer], usage: Any, counts: tuple[int, ...]
) -> None:
    # Given a reply whose usage is as the server sent it (untrusted), When the client reads it
    body = {**completion_body(), "usage": usage}
    reply, _ = _run(scripted_server, [Scripted(body=body)])
    # Then the text is kept, and token counts are read where they are non-negative integers, else 0
    assert reply.text == '{"ok": true}'
    got = reply.usage
    assert (got.input_tokens, got.cached_input_tokens, got.output_tokens, got.reasoning_tokens) == counts


def test_the_call_budget_bounds_a_call_with_retries_left(
    scripted_server: Callable[[list[Scripted]], ScriptedServer],
) -> None:
    # Given a server that never answers in time, a 1 s request timeout, 4 retries allowed (5 s
    # worth) and a call budget of 2.5 s
    server = scripted_server([Scripted(delay_s=3.0)] * 5)
    client = ModelClient(_settings(server.base_url, timeout_s=1.0, max_retries=4, call_budget_s=2.5))
    # When the client calls
    started = time.monotonic()
    reply = client.call(_call())
    elapsed_s = time.monotonic() - started
    # Then it gives up within the budget (its last request cut short), saying why, with retries left
    assert reply.error_kind == "unavailable"
    assert "call budget of 2.5 s spent" in (reply.error or "")
    assert 2.0 <= elapsed_s < 3.2
    assert reply.transport_retries < 4
