"""Redis (broker and job store, AOF with fsync always) stopped and started again mid-batch: no accepted job
lost.

A producer thread keeps enqueueing while Redis goes away; an enqueue that raises is retried with
the same idempotency key (that is the producer contract: a job counts as accepted once enqueue
returned). The workers are never restarted: they and the producer must reconnect by themselves,
and every accepted job must end delivered (or soft-delivered) exactly once, not by the watchdog.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from suture.workers.producer import JobHandle, enqueue
from suture.workers.runtime.app import configure
from tests.fixtures.redis_server import RedisServer
from tests.fixtures.workers import CeleryStack
from tests.reliability.conftest import KeyedWebhook, trace_problems, varied_document, wait_until
from tests.reliability.soak_report import write_section

pytestmark = pytest.mark.integration

OUTAGE_S = 2.0
LATENCY_SCALE = 0.05
ENV = {"SUTURE_WORKER__JOB_DEADLINE_S": "600", "SUTURE_WORKER__WATCHDOG_INTERVAL_S": "1"}


@dataclass
class Producer:
    """Enqueues ``jobs`` jobs at a steady pace; retries a failed enqueue with the same idempotency key."""

    stack: CeleryStack
    jobs: int
    callback: str
    pace_s: float
    accepted: list[JobHandle] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self._run, name="producer", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        for i in range(self.jobs):
            self.accepted.append(self._enqueue(i))
            time.sleep(self.pace_s)

    def _enqueue(self, i: int) -> JobHandle:
        deadline = time.monotonic() + 60
        while True:
            try:
                return enqueue(
                    "quiz",
                    varied_document(i),
                    questions=4,
                    idempotency_key=f"restart-{i}",
                    callback=self.callback,
                    settings=self.stack.settings,
                )
            except Exception as exc:  # the outage: retry as a producer would, same key
                self.errors[type(exc).__name__] += 1
                assert time.monotonic() < deadline, f"enqueue {i} kept failing: {exc}"
                time.sleep(0.2)


def _outage(server: RedisServer, how: str) -> None:
    if how == "sigterm":
        server.stop()
    else:
        server.kill()
    time.sleep(OUTAGE_S)
    server.start()


@pytest.mark.parametrize(
    ("how", "jobs", "restarts"),
    [
        pytest.param("sigterm", 150, 1, id="sigterm", marks=pytest.mark.timeout(240)),
        pytest.param("sigkill", 150, 1, id="sigkill", marks=pytest.mark.timeout(240)),
        pytest.param("sigkill", 2000, 6, id="soak", marks=[pytest.mark.soak, pytest.mark.timeout(3600)]),
    ],
)
def test_a_redis_restart_mid_batch_loses_no_accepted_job(
    how: str,
    jobs: int,
    restarts: int,
    redis_factory: Callable[..., RedisServer],
    celery_stack: Callable[..., CeleryStack],
    simulator: Callable[..., str],
    keyed_webhook: KeyedWebhook,
) -> None:
    # Given Redis with AOF (fsync always) as broker and store, two workers, and a producer enqueueing steadily
    server = redis_factory(appendonly=True)
    urls = {"SUTURE_REDIS_URL": server.url, "SUTURE_RESULT_BACKEND": server.url}
    model_url = simulator("realistic", latency_scale=LATENCY_SCALE, seed=3)
    # The default poison cap: outages re-run a step under the same execution, which counts once.
    stack = celery_stack(model_url, broker_url=server.url, **urls, **ENV)
    configure(stack.settings)
    workers = [stack.start_worker(concurrency=20) for _ in range(2)]
    producer = Producer(stack, jobs, keyed_webhook.url, pace_s=0.02)
    started = time.monotonic()
    producer.start()
    # When Redis is stopped and started again on the same port while jobs are enqueued and running
    for k in range(restarts):
        wait_until(lambda k=k: len(producer.accepted) >= (k + 1) * jobs // (restarts + 2), 120, "enqueued")
        _outage(server, how)
    assert producer.thread is not None
    producer.thread.join(timeout=120)
    results = [h.result(timeout_s=150) for h in producer.accepted]
    elapsed_s = time.monotonic() - started
    # Then every accepted job ended delivered once, by the workers that were there all along
    assert len(producer.accepted) == jobs
    statuses = Counter(r["status"] for r in results)
    assert set(statuses) <= {"delivered", "soft_delivered"}, _reasons(results)
    assert not [r["reason"] for r in results if "deadline" in r["reason"]]
    assert not {r["job_id"]: p for r in results if (p := trace_problems(r))}
    # ...with a webhook each, keyed by job id (a resend after a Redis drop carries the same key)
    job_ids = {h.id for h in producer.accepted}
    wait_until(lambda: set(keyed_webhook.by_key()) >= job_ids, 30, "a webhook for every job")
    assert set(keyed_webhook.by_key()) == job_ids
    assert not keyed_webhook.mismatched()
    dead = {w.name: (w.process.returncode, w.log()[-1500:]) for w in workers if w.process.poll() is not None}
    assert not dead, f"workers died with the broker: {dead}"
    assert sum(producer.errors.values()) > 0, "no enqueue met the outage: the test did not test it"
    if jobs >= 1000:
        write_section(
            "Broker restart (Redis AOF, appendfsync always)",
            {"jobs": jobs, "restarts": restarts, "how": how, "outage_s": OUTAGE_S, **ENV},
            {
                "accepted jobs lost": 0,
                "statuses": dict(statuses),
                "enqueue errors retried by the producer": dict(producer.errors),
                "webhook repeats (same Idempotency-Key)": sum(keyed_webhook.by_key().values()) - jobs,
                "wall time (s)": f"{elapsed_s:.1f}",
            },
        )


def _reasons(results: list[dict[str, Any]]) -> Counter[str]:
    return Counter(
        f"{r['status']}: {r['reason'][:120]}" for r in results if r["status"] not in ("delivered",)
    )
