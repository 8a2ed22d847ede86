"""The inline runner over real HTTP: the real model client against a scripted server and the simulator."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from suture.config.settings import Settings, load_settings
from suture.contracts.registry import get_contract
from suture.tasks.policy import load_policy
from suture.tasks.runner import run_inline
from suture.tasks.spec import EngineOptions, JobSpec
from suture.workers.model.client import ModelClient
from tests.fixtures.scripted_model import document, quiz

RESULT_KEYS = {
    "job_id",
    "status",
    "reason",
    "output",
    "failures",
    "attempts",
    "usage",
    "cost_usd",
    "latency_ms",
    "simulated",
}
ATTEMPT_KEYS = {
    "n",
    "step",
    "mode",
    "model",
    "reasoning_effort",
    "targets",
    "patch",
    "rolled_back",
    "failures",
    "usage",
    "cost_usd",
    "latency_ms",
    "transport_retries",
    "example_tier",
    "outcome",
}


@pytest.fixture
def client_for() -> Iterator[Any]:
    """A factory of real model clients; their HTTP connections are closed at teardown."""
    clients: list[ModelClient] = []

    def make(settings: Settings) -> ModelClient:
        clients.append(ModelClient(settings))
        return clients[-1]

    yield make
    for client in clients:
        # ModelClient has no close(); its SDK (an httpx pool) must not outlive the test's server.
        sdk = client._sdk
        if sdk is not None:
            sdk.close()


def settings_for(base_url: str) -> Settings:
    return load_settings(overrides={"openai_base_url": base_url, "openai_api_key": "sk-test-not-a-real-key"})


def job(source: str, settings: Settings, *, questions: int = 15, simulated: bool = True) -> JobSpec:
    contract = get_contract("quiz", questions=questions, source=source, rules=settings.quiz)
    return JobSpec(
        job_id="inline-1",
        contract="quiz",
        params=contract.params(),
        source=source,
        simulated=simulated,
        options=EngineOptions.from_settings(settings),
    )


@pytest.mark.parametrize("k", [1, 3, 4])
def test_surgical_repair_over_http_keeps_other_questions_byte_identical(
    scripted_model: Any, client_for: Any, k: int
) -> None:
    # Given a model whose full reply has k imbalanced questions and whose slices repair them
    server = scripted_model(questions=15, imbalanced=k)
    settings = settings_for(server.base_url)
    finals: list[dict[str, Any]] = []
    # When the default policy runs inline through the real client
    final = run_inline(
        job(document(15), settings),
        load_policy("default", settings),
        client_for(settings).call,
        settings,
        on_result=finals.append,
    )
    # Then one full call and k slice calls deliver a valid quiz; the other questions are byte-identical
    assert final["status"] == "delivered", final["reason"]
    assert server.requests == {"full": 1, "slice": k}
    assert finals == [final]
    first = quiz(15, k)["questions"]
    for i in range(k, 15):
        assert json.dumps(final["output"]["questions"][i]) == json.dumps(first[i])
    assert final["attempts"][1]["targets"] == [f"/questions/{i}/options" for i in range(k)]
    assert set(final) >= RESULT_KEYS and all(set(a) >= ATTEMPT_KEYS for a in final["attempts"])


def test_default_policy_on_the_simulator_delivers_a_valid_quiz(simulator: Any, client_for: Any) -> None:
    # Given the realistic simulator and a real course document
    settings = settings_for(simulator(profile="realistic", latency_scale=0.0, seed=7))
    with open("examples/photosynthesis.md", encoding="utf-8") as handle:
        source = handle.read()
    # When a job runs inline with the default policy
    final = run_inline(
        job(source, settings), load_policy("default", settings), client_for(settings).call, settings
    )
    # Then the quiz is delivered valid and labelled simulated; a surgical step did the repair
    assert final["status"] == "delivered", final["reason"]
    assert final["simulated"] is True
    contract = get_contract("quiz", questions=15, source=source, rules=settings.quiz)
    assert contract.validate(final["output"]).ok
    assert "surgical" in {a["mode"] for a in final["attempts"]}
    assert final["cost_usd"] is not None and final["cost_usd"] > 0
