"""``suture cancel JOB`` / ``JobHandle.cancel()``: a job stopped on request, through real workers.

A cancelled job has its result stored at once (status ``cancelled``); the tasks still queued or
running for it find it finished and stop, a model reply in flight is dropped, and the callback
fires once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from suture.workers.producer import JobHandle, cancel, enqueue
from suture.workers.runtime.app import configure
from suture.workers.store.job_store import get_store
from suture.workers.store.keys import Keys
from tests.fixtures.redis_server import free_port
from tests.fixtures.scripted_model import document
from tests.fixtures.workers import CeleryStack, WebhookReceiver, wait_for

pytestmark = pytest.mark.integration

HELD_CALL_LIMITS = {
    "SUTURE_CLIENT__TIMEOUT_S": "30",
    "SUTURE_CLIENT__CALL_BUDGET_S": "32",
    "SUTURE_WORKER__SOFT_TIME_LIMIT_S": "34",
    "SUTURE_WORKER__TIME_LIMIT_S": "36",
    "SUTURE_WORKER__VISIBILITY_TIMEOUT_S": "40",
    "SUTURE_WORKER__STALL_S": "60",
    "SUTURE_WORKER__IDLE_STALL_S": "60",
}


def job_in_flight(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    webhook_receiver: WebhookReceiver,
) -> tuple[Any, CeleryStack, JobHandle]:
    """A model holding its replies until released, a worker, and a job with a webhook whose first model
    call is in flight.

    The call waits for the test (25 s at most: a cancel from a CLI started on a loaded machine took over
    4 s), so the time limits are widened to let it: a 30 s client timeout, the task limits above it and
    stall detection past it, or the call would time out and be sent again.
    """
    model = scripted_model(questions=4, held_s=25.0)
    stack = celery_stack(model.base_url, **HELD_CALL_LIMITS)
    configure(stack.settings)
    stack.start_worker(concurrency=4)
    handle = enqueue("quiz", document(4), questions=4, callback=webhook_receiver.url, settings=stack.settings)
    wait_for(lambda: model.in_flight["now"] == 1)
    return model, stack, handle


def test_a_job_cancelled_during_its_model_call_stays_cancelled_and_calls_back_once(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    webhook_receiver: WebhookReceiver,
) -> None:
    # Given a slow model, a worker, and a job whose first model call is in flight
    model, stack, handle = job_in_flight(celery_stack, scripted_model, webhook_receiver)
    # When it is cancelled from the CLI with a reason
    done = stack.cli("cancel", handle.id, "--reason", "the course was withdrawn")
    model.release()
    # Then the result is there at once: cancelled, with the reason, no output and no attempt yet
    assert (done.returncode, done.stdout) == (0, "cancelled\n"), done.stderr
    result = handle.result(timeout_s=1)
    assert (result["status"], result["reason"], result["output"]) == (
        "cancelled",
        "the course was withdrawn",
        None,
    )
    assert result["attempts"] == [] and result["job_id"] == handle.id
    # And once the reply in flight came back and its task ended, nothing it brought was applied
    store = get_store(stack.settings)
    flags = Keys(store.prefix).flags(handle.id)
    wait_for(lambda: store.redis.hget(flags, "unfinished:attempt:1") == "0")
    assert handle.result(timeout_s=1) == result and handle.status() == "cancelled"
    assert store.load(handle.id).version == 0
    assert model.requests == {"full": 1, "slice": 0}
    # And the webhook fired once, for the cancelled result
    wait_for(lambda: webhook_receiver.received == {handle.id: 1})


def test_a_job_cancelled_during_its_surgical_round_keeps_the_applied_attempt_and_merges_nothing(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    webhook_receiver: WebhookReceiver,
) -> None:
    # Given a slow model whose first reply leaves 3 questions to repair, and the job's 3 slices in flight
    model = scripted_model(questions=4, imbalanced=3, latency_s=2.0)
    stack = celery_stack(model.base_url)
    configure(stack.settings)
    stack.start_worker(concurrency=4)
    handle = enqueue("quiz", document(4), questions=4, callback=webhook_receiver.url, settings=stack.settings)
    wait_for(lambda: model.in_flight["now"] == 3)  # only the 3 slices are ever in flight together
    # When it is cancelled
    assert handle.cancel("enough") is True
    # Then its result keeps the applied full attempt and nothing of the round in flight
    result = handle.result(timeout_s=1)
    assert (result["status"], result["reason"], result["output"]) == ("cancelled", "enough", None)
    assert [a["mode"] for a in result["attempts"]] == ["full"]
    # And when the slices came back, the merge they claimed ran, found the job finished, applied nothing
    store = get_store(stack.settings)
    flags = Keys(store.prefix).flags(handle.id)
    wait_for(lambda: store.redis.hget(flags, "unfinished:merge:2") == "0")
    assert handle.result(timeout_s=1) == result and store.load(handle.id).version == 1
    wait_for(lambda: webhook_receiver.received == {handle.id: 1})
    assert model.requests == {"full": 1, "slice": 3}


def test_a_queued_job_cancelled_before_any_worker_runs_makes_no_model_call(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    webhook_receiver: WebhookReceiver,
) -> None:
    # Given a job queued while no worker runs
    model = scripted_model(questions=4)
    stack = celery_stack(model.base_url)
    configure(stack.settings)
    handle = enqueue("quiz", document(4), questions=4, callback=webhook_receiver.url, settings=stack.settings)
    assert handle.status() == "queued"
    # When it is cancelled through the API, and a worker then starts
    assert handle.cancel() is True
    stack.start_worker(concurrency=2)
    # Then its queued attempt finds it finished: no model call, the default reason, one webhook
    wait_for(lambda: webhook_receiver.received == {handle.id: 1})
    result = handle.result(timeout_s=1)
    assert (result["status"], result["reason"]) == ("cancelled", "cancelled on request")
    assert model.requests == {"full": 0, "slice": 0}
    # And the watchdog no longer watches it
    store = get_store(stack.settings)
    assert store.redis.zscore(Keys(store.prefix).deadlines(), handle.id) is None


def test_a_job_cancelled_while_the_broker_is_unreachable_still_calls_back_once(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    webhook_receiver: WebhookReceiver,
) -> None:
    # Given a job with a webhook whose model call is in flight, and a producer that cannot reach the broker
    model, stack, handle = job_in_flight(celery_stack, scripted_model, webhook_receiver)
    cut_off = stack.settings.model_copy(update={"broker_url": f"redis://127.0.0.1:{free_port()}/0"})
    # When that producer cancels it
    assert cancel(handle.id, "no broker here", settings=cut_off) is True
    model.release()
    # Then the cancel stands, and the watchdog sends its delivery: the webhook fires once
    assert handle.result(timeout_s=1)["status"] == "cancelled"
    wait_for(lambda: webhook_receiver.received == {handle.id: 1})
    store = get_store(stack.settings)
    wait_for(lambda: store.redis.zscore(Keys(store.prefix).deadlines(), handle.id) is None)
    time.sleep(2 * stack.settings.worker.watchdog_interval_s)  # a later sweep sends nothing more
    assert webhook_receiver.received == {handle.id: 1} and model.requests == {"full": 1, "slice": 0}


def test_only_an_unfinished_job_can_be_cancelled(
    celery_stack: Callable[..., CeleryStack], scripted_model: Callable[..., Any]
) -> None:
    # Given a job delivered
    model = scripted_model(questions=4)
    stack = celery_stack(model.base_url)
    configure(stack.settings)
    stack.start_worker(concurrency=2)
    handle = enqueue("quiz", document(4), questions=4, settings=stack.settings)
    delivered = handle.result(timeout_s=60)
    assert delivered["status"] == "delivered"
    # When it is cancelled / Then nothing changes: False from the API, exit 1 and one line from the CLI
    assert cancel(handle.id, settings=stack.settings) is False
    done = stack.cli("cancel", handle.id)
    assert done.returncode == 1 and done.stdout == "", done.stderr
    assert done.stderr == f"suture: job {handle.id} had already finished (delivered); nothing changed\n"
    assert handle.result(timeout_s=1) == delivered
    # And an unknown job is a clear error (exit 2, one line, no traceback)
    unknown = stack.cli("cancel", "nope")
    assert unknown.returncode == 2 and "no such job: nope" in unknown.stderr
    assert unknown.stderr.count("\n") == 1 and "Traceback" not in unknown.stderr
