"""A Batch API round driven by hand against a real Redis and the simulator: submitted exactly once.

No Celery here: the round's steps are called as its task would call them, so a crash can be placed
exactly (between creating the batch and recording its id). Steps sent again are recorded by a
small ``StepSender`` (the dispatcher is not what is under test).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2
import pytest

from suture.config.settings import Settings, load_settings
from suture.tasks.calls import ModelCall
from suture.workers.flow.batch_rounds import MAX_SUBMIT_TRIES, BatchRounds
from suture.workers.model.batch_client import BatchClient
from suture.workers.simulator import SimulatorHandle, start_simulator
from suture.workers.simulator.batches import BatchOptions
from suture.workers.store.batch_lines import BatchLines
from suture.workers.store.connection import Pool, redis_client

pytestmark = pytest.mark.integration


@dataclass
class SentSteps:
    """The steps a round sent again (a ``StepSender``), and the rounds the sweep sent."""

    attempts: list[tuple[str, int]] = field(default_factory=list)
    sliced: list[tuple[str, int, list[str]]] = field(default_factory=list)
    rounds: list[str] = field(default_factory=list)

    def attempt(self, job_id: str, n: int, *_: object) -> None:  # its class and tenant: no queues here
        self.attempts.append((job_id, n))

    def slices(self, job_id: str, n: int, pointers: list[str], *_: object) -> None:
        self.sliced.append((job_id, n, pointers))


@pytest.fixture
def sim() -> Iterator[SimulatorHandle]:
    handle = start_simulator("realistic", 0.0, seed=1, batch_options=BatchOptions(delay_s=0.3))
    yield handle
    handle.stop()


@pytest.fixture
def rounds(redis_url: str, sim: SimulatorHandle) -> Iterator[Callable[[], tuple[BatchRounds, SentSteps]]]:
    prefix = f"t{uuid.uuid4().hex[:8]}"
    client = redis_client(redis_url, Pool(8, 5.0, 5.0))
    settings = _settings(sim.base_url)

    def make() -> tuple[BatchRounds, SentSteps]:
        sent = SentSteps()
        made = BatchRounds(
            settings=settings,
            lines=BatchLines(client, prefix=prefix, ttl_s=600),
            service=BatchClient(settings),
            steps=sent,
            send_round=sent.rounds.append,
        )
        return made, sent

    yield make
    for key in client.scan_iter(match=f"{prefix}:*"):
        client.delete(key)


def _settings(base_url: str) -> Settings:
    overrides: dict[str, Any] = {
        "openai_base_url": base_url,
        "openai_api_key": "sk-test-not-a-real-key",
        "batch_api": {"collect_s": 0, "poll_s": 0.1, "lease_s": 5},
    }
    return load_settings(overrides=overrides)


def _call(text: str) -> ModelCall:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    schema["additionalProperties"] = False
    messages = [{"role": "user", "content": f"Answer in JSON. {text}"}]
    return ModelCall(model="gpt-5-nano", messages=messages, schema_name="answer", json_schema=schema)


def _batch_count(sim: SimulatorHandle) -> int:
    return int(httpx2.get(f"{sim.base_url}/_stats", timeout=5).json()["batches"]["count"])


def _run_to_end(made: BatchRounds, round_id: str) -> str:
    deadline = time.monotonic() + 20
    status = made.advance(round_id)
    while status not in ("collected", "done"):
        assert time.monotonic() < deadline, f"round stuck at {status}"
        time.sleep(0.1)
        status = made.advance(round_id)
    return status


def test_a_line_is_recorded_once_and_its_reply_found_after_the_round(
    rounds: Callable[[], tuple[BatchRounds, SentSteps]], sim: SimulatorHandle
) -> None:
    # Given a job's attempt 1 asked twice (a redelivered task) and a slice of attempt 2
    made, sent = rounds()
    assert made.call("job1", _call("one"), 1) is None
    assert made.call("job1", _call("one"), 1) is None
    assert made.call("job2", _call("two"), 2, "/questions/1") is None

    # When the sweep claims them and the round runs to its end
    sent_rounds = made.sweep(time.time() + 1)
    assert len(sent_rounds) == 1
    assert _run_to_end(made, sent_rounds[0]) == "collected"

    # Then one batch held the two lines; each step was sent again and finds its reply
    assert _batch_count(sim) == 1
    assert sent.attempts == [("job1", 1)] and sent.sliced == [("job2", 2, ["/questions/1"])]
    reply = made.call("job1", _call("one"), 1)
    assert reply is not None and reply.batch_id and reply.text
    assert reply.cost_usd is not None and reply.cost_usd > 0
    # ...and a step asking again after the round records no new line
    assert made.sweep(time.time() + 2) == []


def test_a_round_killed_between_creating_its_batch_and_recording_it_does_not_submit_again(
    rounds: Callable[[], tuple[BatchRounds, SentSteps]], sim: SimulatorHandle
) -> None:
    # Given a claimed round whose batch was created by a task killed before it recorded the batch id
    made, _ = rounds()
    assert made.call("job3", _call("three"), 1) is None
    (round_id,) = made.sweep(time.time() + 1)
    lines = made.lines.lines(round_id)
    made.service.submit(round_id, [json.dumps(e["request"]) for e in lines.values()])
    assert _batch_count(sim) == 1

    # When the round task runs again (a new process: a new client)
    again, sent = rounds()
    assert _run_to_end(again, round_id) == "collected"

    # Then it found and polled the batch already created: still one batch, and the job was sent on
    assert _batch_count(sim) == 1
    assert sent.attempts == [("job3", 1)]


def test_a_round_that_cannot_be_submitted_ends_its_lines_as_failed_calls(
    rounds: Callable[[], tuple[BatchRounds, SentSteps]],
) -> None:
    # Given an endpoint that refuses every new batch (the simulator holds its maximum of one, already used)
    full = start_simulator("realistic", 0.0, seed=1, batch_options=BatchOptions(delay_s=0.3, max_batches=1))
    try:
        made, sent = rounds()
        made.service = BatchClient(_settings(full.base_url))
        made.service.submit(
            "someone-else",
            [
                json.dumps(
                    {
                        "custom_id": "x",
                        "method": "POST",
                        "url": "/v1/chat/completions",
                        "body": {"model": "gpt-5-nano", "messages": [{"role": "user", "content": "hi"}]},
                    }
                )
            ],
        )
        assert made.call("job4", _call("four"), 1) is None
        (round_id,) = made.sweep(time.time() + 1)

        # When its round task tries to submit it, again and again
        outcomes = [made.advance(round_id) for _ in range(MAX_SUBMIT_TRIES)]

        # Then it retries (looking for the batch first each time), and at the last try gives up on it:
        assert outcomes == ["claimed:retry"] * (MAX_SUBMIT_TRIES - 1) + ["collected"]
        # ...the line is a failed call its job's policy handles, and the job is sent on
        reply = made.call("job4", _call("four"), 1)
        assert reply is not None and reply.error_kind == "unavailable" and "unsubmitted" in str(reply.error)
        assert sent.attempts == [("job4", 1)]
    finally:
        full.stop()
