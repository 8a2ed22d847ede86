"""Jobs through OpenAI's Batch API, end to end: real workers, Redis, and the simulator's /v1/batches.

Each test enqueues quiz jobs with ``batch_api`` set, runs ``celery -A suture.workers worker``
processes against a simulator whose batches complete after a short delay, and checks what the
simulator saw (its ``/v1/_stats``: batches and the lines they held) against the rounds in the job
store: every line submitted once, no call made online that should not be, every job ended.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import httpx2
import pytest

from suture.workers.producer import enqueue
from suture.workers.runtime.app import configure
from suture.workers.simulator import SimulatorHandle, start_simulator
from suture.workers.simulator.batches import BatchOptions
from suture.workers.store.job_store import get_store
from tests.fixtures.workers import CeleryStack
from tests.reliability.conftest import trace_problems, varied_document, wait_until

pytestmark = pytest.mark.integration

QUESTIONS = 4
ENV = {
    "SUTURE_WORKER__WATCHDOG_INTERVAL_S": "0.5",
    "SUTURE_BATCH_API__COLLECT_S": "1",
    "SUTURE_BATCH_API__POLL_S": "0.5",
    "SUTURE_BATCH_API__LEASE_S": "6",
}


@pytest.fixture
def batch_simulator() -> Iterator[Callable[..., SimulatorHandle]]:
    """Factory: a simulator (realistic model: some quizzes need repair) whose batches take ``delay_s``."""
    handles: list[SimulatorHandle] = []

    def start(delay_s: float = 1.0, **options: Any) -> SimulatorHandle:
        batch_options = BatchOptions(delay_s=delay_s, **options)
        handles.append(start_simulator("realistic", 0.0, seed=3, batch_options=batch_options))
        return handles[-1]

    yield start
    for handle in handles:
        handle.stop()


def stats(handle: SimulatorHandle) -> dict[str, Any]:
    """The simulator's own account of what it was asked (a simulation's statistics endpoint)."""
    return dict(httpx2.get(f"{handle.base_url}/_stats", timeout=5).json())


def online_requests(handle: SimulatorHandle) -> int:
    """Chat Completions requests answered online (not as batch lines)."""
    return int(stats(handle)["requests"])


def enqueue_jobs(stack: CeleryStack, count: int, mode: str) -> list[str]:
    configure(stack.settings)
    return [
        enqueue("quiz", varied_document(i), questions=QUESTIONS, settings=stack.settings, batch_api=mode).id
        for i in range(count)
    ]


def results_of(stack: CeleryStack, job_ids: list[str], timeout_s: float) -> dict[str, dict[str, Any]]:
    store = get_store(stack.settings)
    wait_until(lambda: all(store.result(j) is not None for j in job_ids), timeout_s, "every job ended")
    return {j: r for j in job_ids if (r := store.result(j)) is not None}


def rounds_of(stack: CeleryStack) -> dict[str, dict[str, str]]:
    """Every Batch API round the job store holds, by id."""
    client = get_store(stack.settings).redis
    names = [
        str(k) for k in client.scan_iter(match="suture:batchapi:round:*") if not str(k).endswith(":lines")
    ]
    return {name.rsplit(":", 1)[-1]: dict(client.hgetall(name)) for name in names}


def test_all_mode_sends_every_call_through_batches_once(
    celery_stack: Callable[..., CeleryStack], batch_simulator: Callable[..., SimulatorHandle]
) -> None:
    # Given a simulator whose quizzes often need repair, and jobs whose every call goes through the Batch API
    sim = batch_simulator(delay_s=1.0)
    stack = celery_stack(sim.base_url, **ENV)
    stack.start_worker(concurrency=8)
    job_ids = enqueue_jobs(stack, 6, "all")

    # When the workers run them
    results = results_of(stack, job_ids, 120)

    # Then every job ended with a clean trace, and no call went online
    assert all(not trace_problems(r) for r in results.values()), [trace_problems(r) for r in results.values()]
    assert online_requests(sim) == 0
    attempts = [a for r in results.values() for a in r["attempts"] if a["mode"] != "fix"]
    assert attempts and all(a["batch_id"] for a in attempts)
    # ...repairs happened (surgical slices through batches too)
    assert any(a["mode"] == "surgical" for a in attempts), "no quiz needed a repair: the test shows nothing"
    # ...and each round's lines were one batch, each line submitted once
    rounds = rounds_of(stack)
    batches = stats(sim)["batches"]
    assert batches["count"] == len(rounds) == len({r["batch_id"] for r in rounds.values()})
    calls = sum(1 if a["mode"] == "full" else len(a["slices"]) for a in attempts)
    assert batches["requests"]["total"] == calls == sum(int(r["lines"]) for r in rounds.values())
    assert all(r["status"] == "done" for r in rounds.values())


def test_batch_price_is_the_ratio_of_the_online_price(
    celery_stack: Callable[..., CeleryStack], batch_simulator: Callable[..., SimulatorHandle]
) -> None:
    # Given the same documents run once online and once through the Batch API's first attempts
    sim = batch_simulator(delay_s=0.5)
    stack = celery_stack(sim.base_url, **ENV)
    stack.start_worker(concurrency=8)
    online = results_of(stack, enqueue_jobs(stack, 3, "off"), 60)
    batched = results_of(stack, enqueue_jobs(stack, 3, "first"), 60)

    # Then a first attempt through a batch costs half its online twin (same prompt, same seeded reply)
    def first_cost(results: dict[str, dict[str, Any]]) -> list[float]:
        return sorted(r["attempts"][0]["cost_usd"] for r in results.values())

    assert all(r["attempts"][0]["batch_id"] is None for r in online.values())
    assert all(r["attempts"][0]["batch_id"] for r in batched.values())
    for paid_online, paid_batch in zip(first_cost(online), first_cost(batched), strict=True):
        assert paid_batch == pytest.approx(paid_online * 0.5, rel=0.05)
    # ...and in mode "first" every repair after attempt 1 went online
    repairs = [a for r in batched.values() for a in r["attempts"][1:] if a["mode"] != "fix"]
    assert all(a["batch_id"] is None for a in repairs)


def test_failed_lines_and_an_expired_batch_become_failed_calls_the_policy_retries(
    celery_stack: Callable[..., CeleryStack], batch_simulator: Callable[..., SimulatorHandle]
) -> None:
    # Given a simulator whose first batch expires (half its lines never run) and whose lines sometimes fail
    # (A line error rate of 0.2 let a run with fewer lines see none: the 500 check below then failed.)
    sim = batch_simulator(delay_s=1.0, expire_rate=1.0, line_error_rate=0.5)
    stack = celery_stack(sim.base_url, **ENV)
    job_ids = enqueue_jobs(stack, 6, "all")
    stack.start_worker(concurrency=8)
    wait_until(lambda: stats(sim)["batches"]["statuses"].get("expired", 0) >= 1, 60, "a batch expired")
    runner = sim.server.batches.runner
    runner.options = replace(runner.options, expire_rate=0.0)

    # When the jobs go on
    results = results_of(stack, job_ids, 180)

    # Then the lines the expired batch never ran (and the failed lines) are failed calls in the traces,
    errors = [
        a["error"] for r in results.values() for a in r["attempts"] if a["outcome"] == "transport_error"
    ]
    assert any("batch_expired" in e for e in errors), errors
    assert any("HTTP 500" in e for e in errors), errors  # a line failed inside a batch (its error file)
    # ...which the policy retried through later rounds, and every job ended with a clean trace
    assert all(not trace_problems(r) for r in results.values())
    assert stats(sim)["batches"]["count"] >= 2
    assert online_requests(sim) == 0


def test_restarted_and_killed_workers_poll_the_same_batch(
    celery_stack: Callable[..., CeleryStack], batch_simulator: Callable[..., SimulatorHandle]
) -> None:
    # Given jobs whose first round was submitted (a batch held running until the test lets it end),
    # and the worker stopped meanwhile. (A fixed 15 s batch sometimes ended on a loaded machine before
    # the graceful stop, the next start and its first poll, and the kill below found it collected.)
    sim = batch_simulator(delay_s=3_600.0)
    stack = celery_stack(sim.base_url, **ENV)
    job_ids = enqueue_jobs(stack, 4, "first")
    first = stack.start_worker(concurrency=4)
    wait_until(lambda: stats(sim)["batches"]["count"] == 1, 30, "the first batch submitted")
    first.stop()
    time.sleep(1.0)
    # When a new worker starts, is SIGKILLed while it polls, and another one takes over
    second = stack.start_worker(concurrency=4)
    wait_until(lambda: any(int(r.get("polls", 0)) > 0 for r in rounds_of(stack).values()), 30, "a poll")
    second.kill()
    # (killed while the batch was still running: the round is submitted, not yet collected)
    assert [r["status"] for r in rounds_of(stack).values()] == ["submitted"]
    runner = sim.server.batches.runner
    runner.options = replace(runner.options, delay_s=1.0)
    stack.start_worker(concurrency=4)
    results = results_of(stack, job_ids, 90)

    # Then the one batch was polled to its end and fed every job: nothing was submitted twice
    assert stats(sim)["batches"]["count"] == 1
    assert stats(sim)["batches"]["requests"]["total"] == len(job_ids)
    assert all(r["attempts"][0]["batch_id"] for r in results.values())
    assert all(not trace_problems(r) for r in results.values())
