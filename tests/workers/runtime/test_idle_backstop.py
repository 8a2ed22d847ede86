"""The watchdog's short backstop on real workers: a job whose next message is lost, with no task in flight,
is re-sent after ``worker.idle_stall_s`` (seconds here, tens of seconds by default), not ``worker.stall_s``;
a job whose model call runs longer than ``idle_stall_s`` is never re-sent while it runs (its worker holds it).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable

import pytest
import redis

from suture.workers.producer import enqueue
from suture.workers.runtime.app import CONTROL_QUEUE, MODEL_QUEUES, configure
from suture.workers.simulator.profiles import get_profile
from tests.fixtures.workers import CeleryStack, wait_for
from tests.reliability.conftest import varied_document

IDLE_STALL_S = 4.0
# Far past anything this test waits: only the short backstop can re-send a step here.
ENV = {
    "SUTURE_WORKER__STALL_S": "300",
    "SUTURE_WORKER__IDLE_STALL_S": str(IDLE_STALL_S),
    "SUTURE_WORKER__WATCHDOG_INTERVAL_S": "1",
    "SUTURE_WORKER__JOB_DEADLINE_S": "600",
}
LONG_CALLS = {
    "SUTURE_CLIENT__TIMEOUT_S": "30",
    "SUTURE_CLIENT__CALL_BUDGET_S": "35",
    "SUTURE_WORKER__SOFT_TIME_LIMIT_S": "40",
    "SUTURE_WORKER__TIME_LIMIT_S": "45",
    "SUTURE_WORKER__VISIBILITY_TIMEOUT_S": "120",
}
FINAL = ("delivered", "soft_delivered", "failed", "refused")


@pytest.mark.timeout(240)
def test_a_job_whose_message_was_lost_is_re_sent_in_seconds_not_after_stall_s(
    celery_stack: Callable[..., CeleryStack], simulator: Callable[..., str]
) -> None:
    # Given a model that never answers parseable JSON (each attempt sends another), a control worker, and
    # a model worker
    model_url = simulator(get_profile("perfect").with_faults(malformed_json=1.0), latency_scale=1.0)
    stack = celery_stack(model_url, **ENV)
    configure(stack.settings)
    control = stack.start_worker(concurrency=4, queues=f"{CONTROL_QUEUE},suture.callbacks")
    model = stack.start_worker(concurrency=4, queues=",".join(MODEL_QUEUES))
    broker = redis.Redis.from_url(stack.env["SUTURE_BROKER_URL"])
    handle = enqueue("quiz", varied_document(1), questions=3, settings=stack.settings)
    # When the model worker stops (warm: its attempt finishes and sends the next one) and that next
    # message is lost before any worker takes it
    wait_for(lambda: handle.status() == "running", timeout_s=30)
    model.stop()
    assert broker.llen("suture.model") == 1
    broker.delete("suture.model")
    lost_at = time.monotonic()
    stack.start_worker(concurrency=4, queues=",".join(MODEL_QUEUES))
    # Then the watchdog re-sends the job's step within seconds, and the job ends
    wait_for(lambda: handle.status() in FINAL, timeout_s=120)
    ended_s = time.monotonic() - lost_at
    print(
        "\nidle backstop:",
        json.dumps({"idle_stall_s": IDLE_STALL_S, "job ended after the loss (s)": ended_s}),
    )
    assert "re-sent its next step" in control.log()
    assert ended_s < 60


@pytest.mark.timeout(240)
def test_a_model_call_longer_than_idle_stall_s_is_not_re_sent_while_it_runs(
    celery_stack: Callable[..., CeleryStack], simulator: Callable[..., str]
) -> None:
    # Given model calls that take more than twice idle_stall_s (with time limits that allow them)
    slow = dataclasses.replace(get_profile("perfect").with_faults(slow=1.0), slow_extra_s=3 * IDLE_STALL_S)
    model_url = simulator(slow, latency_scale=1.0)
    stack = celery_stack(model_url, **ENV, **LONG_CALLS)
    configure(stack.settings)
    worker = stack.start_worker(concurrency=8)
    # When jobs run
    handles = [enqueue("quiz", varied_document(i), questions=3, settings=stack.settings) for i in range(4)]
    results = [h.result(timeout_s=120) for h in handles]
    # Then none was re-sent by the watchdog, and each made its calls once
    assert "re-sent its next step" not in worker.log()
    assert [r["status"] for r in results] == ["delivered"] * 4
