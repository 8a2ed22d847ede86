"""Workers SIGKILLed at seeded random moments during a batch: every job still ends exactly once.

Model-queue and control-queue workers run apart, so a kill can land between a slice finishing and
its merge: the control worker is killed and kept down while slices finish, so merges queue up (and
the ones it held come back after the visibility timeout). The watchdog (short deadline) is the
backstop for anything stuck; the checks are one result, one delivery notice and one webhook per
job, traces numbered 1..k without repeats, and nothing left over once the queues drain.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import redis

from suture.workers.producer import enqueue
from suture.workers.runtime.app import CALLBACK_QUEUE, CONTROL_QUEUE, MODEL_QUEUE, configure
from suture.workers.store.job_store import get_store
from tests.fixtures.workers import CeleryStack, WorkerProcess
from tests.reliability.conftest import (
    DeliveryCounter,
    KeyedWebhook,
    assert_each_ended_once,
    varied_document,
    wait_until,
)
from tests.reliability.soak_report import write_section

pytestmark = pytest.mark.integration

SEED = 7
LATENCY_SCALE = 0.2
QUESTIONS = 4
ENV = {
    "SUTURE_WORKER__WATCHDOG_INTERVAL_S": "1",
    "SUTURE_WORKER__MAX_REDELIVERIES": "6",
}


@dataclass
class Cluster:
    """Model and control workers of one stack; ``kill`` SIGKILLs one and starts its replacement."""

    stack: CeleryStack
    model: list[WorkerProcess] = field(default_factory=list)
    control: list[WorkerProcess] = field(default_factory=list)
    kills: Counter[str] = field(default_factory=Counter)

    def start(self, role: str) -> None:
        queues, pool = (
            (MODEL_QUEUE, self.model)
            if role == "model"
            else (f"{CONTROL_QUEUE},{CALLBACK_QUEUE}", self.control)
        )
        pool.append(self.stack.start_worker(concurrency=20 if role == "model" else 10, queues=queues))

    def kill(self, role: str, rng: random.Random, *, restart_after_s: float = 0.0, check: Any = None) -> None:
        pool = self.model if role == "model" else self.control
        victim = pool.pop(rng.randrange(len(pool)))
        if role == "model":
            # A model worker is killed holding a task (its log shows one received and not ended), so
            # the kill interrupts work; a batch that has drained by then is killed idle, and the
            # redelivery check below says so.
            _wait_for_busy(victim, timeout_s=20)
        victim.kill()
        self.kills[role] += 1
        time.sleep(restart_after_s)
        if check is not None:
            check()
        self.start(role)


def _wait_for_busy(worker: WorkerProcess, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        log = worker.log()
        ended = sum(log.count(word) for word in (" succeeded in ", " raised ", " retry: ", " ignored"))
        if log.count(" received") > ended:
            return
        time.sleep(0.05)


def _queue_depth(client: redis.Redis, queue: str) -> int:
    keys = [k for k in client.scan_iter(match=f"{queue}*") if client.type(k) == "list"]
    return sum(int(client.llen(k)) for k in keys)


def _drained(client: redis.Redis) -> bool:
    depth = _queue_depth(client, MODEL_QUEUE) + _queue_depth(client, CONTROL_QUEUE)
    return depth == 0 and int(client.hlen("unacked")) == 0


def _redelivered_tasks(client: redis.Redis, job_ids: list[str]) -> int:
    total = 0
    for job_id in job_ids:
        counters = client.hgetall(f"suture:job:{job_id}:flags")
        # A task that applied keeps its own execution counted: one more unfinished one was killed.
        total += sum(1 for k, v in counters.items() if k.startswith("unfinished:") and int(v) > 1)
    return total


@pytest.mark.parametrize(
    ("jobs", "kills"),
    [
        pytest.param(240, 6, id="ci", marks=pytest.mark.timeout(300)),
        pytest.param(5000, 40, id="soak", marks=[pytest.mark.soak, pytest.mark.timeout(5400)]),
    ],
)
def test_random_sigkills_leave_every_job_ended_exactly_once(
    jobs: int,
    kills: int,
    celery_stack: Callable[..., CeleryStack],
    simulator: Callable[..., str],
    keyed_webhook: KeyedWebhook,
    delivery_counter: Callable[[str], DeliveryCounter],
) -> None:
    # Given a queued batch, two model workers, one control worker and a biased simulated model (so slices
    # and merges happen)
    rng = random.Random(SEED)
    # A short deadline (growing with the batch, so queueing alone never trips it) makes the watchdog
    # the backstop that ends any straggler within the test's waits.
    env = ENV | {"SUTURE_WORKER__JOB_DEADLINE_S": str(max(90, jobs // 5))}
    wait_s = 2 * max(90, jobs // 5)
    stack = celery_stack(simulator("realistic", latency_scale=LATENCY_SCALE, seed=SEED), **env)
    configure(stack.settings)
    client = redis.Redis.from_url(str(stack.settings.redis_url), decode_responses=True)
    deliveries = delivery_counter(str(stack.settings.redis_url))
    cluster = Cluster(stack)
    # The batch is queued before the workers start, so the kills below land while its tasks run (queued
    # one by one beside running workers, the batch could be mostly done before the first kill).
    job_ids = [
        enqueue(
            "quiz",
            varied_document(i),
            questions=QUESTIONS,
            callback=keyed_webhook.url,
            settings=stack.settings,
        ).id
        for i in range(jobs)
    ]
    for role in ("model", "model", "control"):
        cluster.start(role)
    started = time.monotonic()

    # When workers are SIGKILLed at seeded moments, one kill holding the control queue down while slices
    # finish
    def merges_pile_up() -> None:
        # The control queue holds only merges and deliveries (the watchdog sweeps in a worker's thread,
        # not as a task): they come once slices run, behind the backlog of first attempts.
        wait_until(
            lambda: _queue_depth(client, CONTROL_QUEUE) > 0,
            wait_s,
            "a merge/deliver waiting while the control worker is down",
        )

    # Kills come in the first half of the deliveries, while first attempts are still queued.
    thresholds = sorted(rng.uniform(0.05, 0.5) for _ in range(kills))
    for k, share in enumerate(thresholds):
        wait_until(lambda s=share: len(deliveries.snapshot()) >= s * jobs, wait_s, f"{share:.0%} delivered")
        if k == 0:
            cluster.kill("control", rng, restart_after_s=2.0, check=merges_pile_up)
        else:
            cluster.kill("model" if k % 2 else "control", rng)
    wait_until(lambda: len(deliveries.snapshot()) >= jobs, wait_s, "every job delivered")
    elapsed_s = time.monotonic() - started
    wait_until(lambda: _drained(client), 60, "queues and unacked messages drained")

    # Then each job ended once: one result, one delivery notice, one webhook, a clean trace, no history
    store = get_store(stack.settings)
    results = {j: r for j in job_ids if (r := store.result(j)) is not None}
    assert_each_ended_once(job_ids, results, deliveries.snapshot())
    # ...and one webhook per job for a receiver honouring Idempotency-Key: none lost; a repeat can only
    # come from a sender killed after the POST and before recording it, and carries the same key.
    wait_until(lambda: set(keyed_webhook.by_key()) >= set(job_ids), 30, "a webhook for every job")
    assert not keyed_webhook.mismatched()
    assert set(keyed_webhook.by_key()) == set(job_ids)
    assert all(store.history(j) == [] for j in job_ids)
    redelivered = _redelivered_tasks(client, job_ids)
    assert redelivered > 0, "no task ran twice: the kills interrupted nothing"
    if jobs >= 1000:
        statuses = Counter(r["status"] for r in results.values())
        write_section(
            "Worker crash (SIGKILL)",
            {"jobs": jobs, "questions": QUESTIONS, "latency_scale": LATENCY_SCALE, "seed": SEED, **env},
            {
                "workers": "2 model (threads x20) + 1 control (threads x10)",
                "kills": dict(cluster.kills),
                "tasks redelivered after a kill": redelivered,
                "jobs lost": 0,
                "jobs delivered twice": 0,
                "statuses": dict(statuses),
                "ended by the watchdog": sum(1 for r in results.values() if "deadline" in r["reason"]),
                "webhook repeats (same Idempotency-Key)": sum(keyed_webhook.by_key().values()) - jobs,
                "wall time (s)": f"{elapsed_s:.1f}",
                "jobs/s": f"{jobs / elapsed_s:.1f}",
            },
        )
