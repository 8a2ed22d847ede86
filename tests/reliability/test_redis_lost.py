"""Redis (broker and store) SIGKILLed mid-batch and restarted empty, with no persistence: the jobs it held are
gone (docs/operations.md says why to run Redis with AOF). What the workers do about it is the test: each lost
job's redelivered messages are dropped with one warning per job, never an internal error per task, and the
workers go on serving new jobs.

Celery pushes the messages it held back into the empty Redis when it reconnects, so every job in flight at
the kill comes back as tasks whose job the store no longer knows.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Callable

import pytest

from suture.workers.producer import enqueue
from suture.workers.runtime.app import configure
from tests.fixtures.redis_server import RedisServer
from tests.fixtures.workers import CeleryStack
from tests.reliability.conftest import varied_document, wait_until

pytestmark = pytest.mark.integration

JOBS = 60
LOST_LINE = re.compile(r"job ([0-9a-f]{32}) is gone from the job store")


@pytest.mark.timeout(300)
def test_a_redis_restarted_empty_gives_one_warning_per_lost_job_and_no_internal_errors(
    redis_factory: Callable[..., RedisServer],
    celery_stack: Callable[..., CeleryStack],
    simulator: Callable[..., str],
) -> None:
    # Given a Redis without persistence as broker and store, two workers, and jobs in flight
    server = redis_factory(appendonly=False)
    model_url = simulator("realistic", latency_scale=0.3, seed=9)
    urls = {"SUTURE_REDIS_URL": server.url, "SUTURE_RESULT_BACKEND": server.url}
    stack = celery_stack(model_url, broker_url=server.url, **urls, SUTURE_WORKER__WATCHDOG_INTERVAL_S="1")
    configure(stack.settings)
    workers = [stack.start_worker(concurrency=20) for _ in range(2)]
    handles = [enqueue("quiz", varied_document(i), questions=4, settings=stack.settings) for i in range(JOBS)]
    wait_until(
        lambda: sum(h.status() in ("delivered", "soft_delivered") for h in handles) >= 5, 120, "5 done"
    )
    # When Redis is SIGKILLed and started again, empty
    server.restart()
    # ...and the workers have had time to reconnect and run what came back
    time.sleep(25)
    after = enqueue("quiz", varied_document(JOBS), questions=4, settings=stack.settings)
    # Then the workers serve new jobs
    assert after.result(timeout_s=90)["status"] in ("delivered", "soft_delivered")
    logs = "".join(w.log() for w in workers)
    warned = Counter(LOST_LINE.findall(logs))
    figures = {
        "jobs": JOBS,
        "jobs warned about as lost": len(warned),
        "warnings per lost job (max)": max(warned.values(), default=0),
        "internal errors": logs.count("internal error in"),
        "tracebacks": logs.count("Traceback"),
    }
    print("\nredis restarted empty:", json.dumps(figures))
    # ...with one warning per lost job, and no internal error
    assert warned, f"no job was lost: the test did not test it ({figures})"
    assert max(warned.values()) == 1, figures
    assert "internal error in" not in logs, figures
    assert not [w.name for w in workers if w.process.poll() is not None], figures
    assert set(warned) <= {h.id for h in handles}
