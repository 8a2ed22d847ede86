"""``suture resume JOB --feedback``: a soft-delivered job re-run through real workers, its history kept."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from suture.workers.errors import NotResumable
from suture.workers.producer import enqueue, resume
from suture.workers.runtime.app import configure
from tests.fixtures.scripted_model import document
from tests.fixtures.workers import CeleryStack, WebhookReceiver, wait_for

pytestmark = pytest.mark.integration

FEEDBACK = "Make every wrong option as long and detailed as the right one."


@pytest.mark.parametrize("simulated", [False, True])
def test_a_soft_delivered_job_resumed_with_feedback_is_delivered_with_its_history(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    webhook_receiver: WebhookReceiver,
    simulated: bool,
) -> None:
    # Given a model that leaves a question imbalanced unless a person's feedback says otherwise,
    # and a job soft-delivered by the full-only chain, with a webhook
    model = scripted_model(questions=4, imbalanced=1, simulated=simulated)
    stack = celery_stack(model.base_url)
    configure(stack.settings)
    stack.start_worker(concurrency=8)
    handle = enqueue(
        "quiz",
        document(4),
        questions=4,
        policy="full-only",
        callback=webhook_receiver.url,
        settings=stack.settings,
    )
    first = handle.result(timeout_s=60)
    assert (first["status"], first["round"], first["simulated"]) == ("soft_delivered", 0, simulated)
    wait_for(lambda: webhook_receiver.received == {handle.id: 1})
    # When a person resumes it from the CLI
    resumed = stack.cli("resume", handle.id, "--feedback", FEEDBACK)
    assert (resumed.returncode, resumed.stdout) == (0, f"{handle.id}\n"), resumed.stderr
    result = handle.result(timeout_s=60)
    # Then it is delivered in round 1: the chain restarted at nano, with the feedback in the prompt
    assert (result["status"], result["round"], result["failures"]) == ("delivered", 1, [])
    assert [(a["n"], a["round"], a["model"]) for a in result["attempts"]] == [
        (1, 0, "gpt-5-nano"),
        (2, 0, "gpt-5-mini"),
        (3, 1, "gpt-5-nano"),
    ]
    assert result["simulated"] is simulated
    assert len(model.feedback_prompts) == 1 and FEEDBACK in model.feedback_prompts[0]
    # And the earlier result is history, the trace spans both rounds, the webhook fired once per round
    assert handle.history() == [first]
    assert [a["round"] for a in json.loads(stack.cli("trace", handle.id).stdout)] == [0, 0, 1]
    wait_for(lambda: webhook_receiver.received == {handle.id: 2})


def test_only_a_soft_delivered_job_can_be_resumed(
    celery_stack: Callable[..., CeleryStack], scripted_model: Callable[..., Any]
) -> None:
    # Given a job delivered fully valid at once
    model = scripted_model(questions=4)
    stack = celery_stack(model.base_url)
    configure(stack.settings)
    stack.start_worker(concurrency=4)
    handle = enqueue("quiz", document(4), questions=4, settings=stack.settings)
    assert handle.result(timeout_s=60)["status"] == "delivered"
    # When it is resumed / Then it is refused clearly, from the API and from the CLI (exit 2, one line)
    with pytest.raises(NotResumable, match="only a soft_delivered job"):
        resume(handle.id, FEEDBACK, settings=stack.settings)
    for args, message in [
        (("resume", handle.id, "--feedback", FEEDBACK), "only a soft_delivered job"),
        (("resume", handle.id, "--feedback", "  "), "feedback is empty"),
        (("resume", "nope", "--feedback", FEEDBACK), "no such job: nope"),
    ]:
        done = stack.cli(*args)
        assert done.returncode == 2 and message in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert handle.history() == []
