"""The simulator enforces each model's context window as OpenAI does, and the engine stops on it at once."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from suture.config.settings import ModelPrice, Settings, load_settings
from suture.tasks.policy import load_policy
from suture.tasks.runner import run_inline
from suture.tasks.spec import EngineOptions, JobSpec
from suture.workers.model.client import ModelClient
from suture.workers.simulator.configure import server_from_settings
from suture.workers.simulator.serving import SimulatorHandle

WINDOW = 3_000
DOCUMENT = "Plate tectonics moves the lithosphere over the asthenosphere at a few centimetres a year. " * 200


@pytest.fixture
def small_window() -> tuple[Settings, str]:
    """Settings whose model table gives gpt-5-nano a 3,000-token window, and a simulator started from them."""
    base = load_settings(overrides={"openai_api_key": None, "openai_base_url": None})
    price = ModelPrice(
        input_per_1m_usd=0.05, cached_input_per_1m_usd=0.005, output_per_1m_usd=0.4, context_tokens=WINDOW
    )
    settings = base.model_copy(update={"prices": {**base.prices, "gpt-5-nano": price}})
    handle = SimulatorHandle(server_from_settings(settings, latency_scale=0), "127.0.0.1", 0)
    yield settings.model_copy(update={"openai_base_url": handle.base_url}), handle.base_url
    handle.stop()


def test_an_oversized_request_is_a_400_context_length_exceeded(small_window: tuple[Settings, str]) -> None:
    # Given a simulated gpt-5-nano with a 3,000-token window
    _, base_url = small_window
    body = {
        "model": "gpt-5-nano",
        "messages": [{"role": "user", "content": DOCUMENT}],
        "max_completion_tokens": 500,
    }
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    # When a prompt of ~4,500 tokens is sent
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    # Then it answers as the provider does: 400, code context_length_exceeded, both numbers
    error = json.loads(caught.value.read())["error"]
    assert caught.value.code == 400
    assert (error["code"], error["type"], error["param"]) == (
        "context_length_exceeded",
        "invalid_request_error",
        "messages",
    )
    assert (
        f"maximum context length is {WINDOW} tokens" in error["message"]
        and "500 in the completion" in error["message"]
    )


def test_the_engine_treats_it_as_a_bad_request_and_stops_without_retrying(
    small_window: tuple[Settings, str],
) -> None:
    # Given the same simulator, and a job run inline past enqueue's own check (which would refuse it)
    settings, _ = small_window
    spec = JobSpec(
        job_id="ctx", params={"questions": 2}, source=DOCUMENT, options=EngineOptions.from_settings(settings)
    )

    # When the job runs
    result = run_inline(spec, load_policy("default", settings), ModelClient(settings).call, settings)

    # Then its one attempt failed terminally, with no transport retry and no further attempt
    assert result["status"] == "failed" and "bad_request" in result["reason"]
    [attempt] = result["attempts"]
    assert attempt["outcome"] == "transport_error" and attempt["transport_retries"] == 0
    assert "maximum context length" in attempt["error"]
