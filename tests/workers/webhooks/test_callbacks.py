"""Callbacks through real workers: retried with backoff until they land or run out, refused again at
delivery after resolving, and never holding a worker: slow-drip receivers do not slow other jobs."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from suture.workers.producer import enqueue, publish
from suture.workers.runtime.app import CONTROL_QUEUE, MODEL_QUEUES, configure, waiting_messages
from suture.workers.store.job_store import get_store
from suture.workers.store.outbox import Pending
from tests.fixtures.receivers import DripReceiver, RecordingReceiver
from tests.fixtures.scripted_model import document
from tests.fixtures.workers import CeleryStack, wait_for

pytestmark = pytest.mark.integration


def test_a_failing_receiver_is_retried_with_backoff_until_it_answers(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    recording_receiver: Callable[..., RecordingReceiver],
) -> None:
    # Given a receiver that answers 500 at first, and a job with it as callback
    model = scripted_model(questions=2)
    stack = celery_stack(model.base_url)
    stack.start_worker(concurrency=8)
    receiver = recording_receiver(status=500)
    handle = enqueue("quiz", document(2), questions=2, callback=receiver.url, settings=stack.settings)
    assert handle.result(timeout_s=30)["status"] == "delivered"
    # When it has failed twice, then recovers
    wait_for(lambda: len(receiver.received()) >= 2, timeout_s=30)
    receiver.status = 204
    # Then a later retry lands, and the outbox holds it as sent: no more deliveries
    wait_for(lambda: get_store(stack.settings).outbox.state(Pending(handle.id, "0")) == "sent", timeout_s=30)
    posts = receiver.received()
    assert len(posts) >= 3 and {p.headers["webhook-id"] for p in posts} == {handle.id}
    gaps = [b - a for a, b in zip(_times(posts), _times(posts)[1:], strict=False)]
    assert all(gap >= 0 for gap in gaps)
    time.sleep(3)
    assert len(receiver.received()) == len(posts)


def _times(posts: list[Any]) -> list[int]:
    return [int(p.headers["webhook-timestamp"]) for p in posts]


def test_a_callback_that_keeps_failing_is_given_up_after_its_attempts(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    recording_receiver: Callable[..., RecordingReceiver],
) -> None:
    model = scripted_model(questions=2)
    stack = celery_stack(model.base_url, SUTURE_WEBHOOK__MAX_ATTEMPTS="2")
    stack.start_worker(concurrency=8)
    receiver = recording_receiver(status=503)
    handle = enqueue("quiz", document(2), questions=2, callback=receiver.url, settings=stack.settings)
    wait_for(
        lambda: get_store(stack.settings).outbox.state(Pending(handle.id, "0")) == "failed", timeout_s=30
    )
    time.sleep(3)
    assert len(receiver.received()) == 2
    assert handle.result(timeout_s=5)["status"] == "delivered"


def test_a_host_that_resolves_inside_at_delivery_is_refused_there(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    recording_receiver: Callable[..., RecordingReceiver],
) -> None:
    # Given workers that allow no internal host, and a job whose callback host resolves to loopback
    # now (stored as if it had resolved to a public address at enqueue: DNS rebinding)
    model = scripted_model(questions=2)
    stack = celery_stack(model.base_url, SUTURE_WEBHOOK__ALLOWED_HOSTS="[]")
    stack.start_worker(concurrency=8)
    receiver = recording_receiver()
    url = receiver.url.replace("127.0.0.1", "localhost")
    store = get_store(stack.settings)
    spec = {"contract": "quiz", "params": {"questions": 2}, "input": document(2), "callback": url}
    job_id, *_ = store.create("ab" * 16, spec, deadline_s=time.time() + 60)
    publish(stack.settings, "suture.attempt", [job_id, 1])
    # When the job is delivered
    wait_for(lambda: store.status(job_id) == "delivered", timeout_s=30)
    # Then the callback is refused after resolving (not retried), and nothing reached the receiver
    wait_for(lambda: store.outbox.state(Pending(job_id, "0")) == "failed", timeout_s=30)
    assert receiver.received() == []
    assert any("resolves to 127.0.0.1 (loopback address)" in w.log() for w in stack.workers)


def test_slow_drip_receivers_never_hold_a_worker_nor_slow_other_jobs(
    celery_stack: Callable[..., CeleryStack],
    scripted_model: Callable[..., Any],
    drip_receiver: Callable[..., DripReceiver],
) -> None:
    # Given the topology of `suture up`: a model worker, and a control worker of 4 threads that also
    # takes callbacks; a model whose quizzes need one surgical repair (two calls, then a merge)
    model = scripted_model(questions=4, imbalanced=1, latency_s=0.5)
    stack = celery_stack(model.base_url, SUTURE_WEBHOOK__DEADLINE_S="3")
    stack.start_worker(concurrency=40, queues=",".join(MODEL_QUEUES))
    stack.start_worker(concurrency=4, queues="suture.control,suture.callbacks")
    configure(stack.settings)
    _durations(stack, 5)  # warm-up: first connections, imports
    alone = _durations(stack, 5)
    # When 8 jobs call back receivers that drip one header line every 2 s, and their deliveries are
    # under way, and then 5 ordinary jobs run
    receivers = [drip_receiver(every_s=2.0, lines=100) for _ in range(8)]
    slow = [
        enqueue("quiz", document(4), questions=4, callback=r.url, settings=stack.settings) for r in receivers
    ]
    assert all(h.result(timeout_s=30)["status"] == "delivered" for h in slow)  # results are not delayed
    wait_for(lambda: all(r.connections >= 1 for r in receivers), timeout_s=30)
    control: list[int] = []
    together = _durations(
        stack, 5, sample=lambda: control.append(waiting_messages((CONTROL_QUEUE,))[CONTROL_QUEUE])
    )
    # Then the ordinary jobs finish within 1.5 x their time alone, the control queue stays short,
    # and every slow delivery was cut at its deadline and retried
    assert max(together) <= 1.5 * max(alone), (alone, together)
    assert max(control) <= 4, control
    wait_for(lambda: all(r.connections >= 2 for r in receivers), timeout_s=30)


def _durations(stack: CeleryStack, jobs: int, sample: Callable[[], None] | None = None) -> list[float]:
    """Enqueue ``jobs`` ordinary jobs at once; the seconds each took to finish."""
    started = time.monotonic()
    handles = [enqueue("quiz", document(4), questions=4, settings=stack.settings) for _ in range(jobs)]
    done: dict[str, float] = {}
    while len(done) < jobs:
        for handle in handles:
            if handle.id not in done and handle.done():
                done[handle.id] = time.monotonic() - started
        if sample is not None:
            sample()
        assert time.monotonic() - started < 60, "ordinary jobs did not finish"
        time.sleep(0.05)
    assert all(h.result(timeout_s=5)["status"] == "delivered" for h in handles)
    return list(done.values())
