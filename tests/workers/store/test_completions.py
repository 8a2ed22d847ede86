"""A thousand waiters in one process share one subscription: threads and asyncio, against a real Redis.

The jobs are enqueued for real (no worker: they stay queued) and end by ``cancel``, which stores a
result and publishes the delivery notice exactly as a worker's delivery does. Before the shared
subscription each waiter held a pub/sub connection of its own, and past redis-py's pool limit the
waiters failed with ``Too many connections``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis

import suture.aio
from suture.workers.producer import cancel, enqueue, get_job
from suture.workers.runtime.app import configure
from suture.workers.store.job_store import get_store
from tests.fixtures.workers import CeleryStack

WAITERS = 1000
DOCUMENT = "Mitochondria make ATP. Ribosomes make proteins."


@pytest.fixture
def stack(celery_stack: Callable[..., CeleryStack]) -> CeleryStack:
    stack = celery_stack("http://127.0.0.1:9/v1")
    configure(stack.settings)
    return stack


def clients(stack: CeleryStack) -> int:
    with redis.Redis.from_url(str(stack.settings.redis_url)) as admin:
        return len(admin.client_list()) - 1  # not this one


def enqueue_many(stack: CeleryStack, count: int) -> list[str]:
    return [enqueue("quiz", DOCUMENT, questions=2, settings=stack.settings).id for _ in range(count)]


def until(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.mark.timeout(240)
def test_a_thousand_threads_wait_on_one_subscription_and_all_get_their_results(stack: CeleryStack) -> None:
    # Given a thousand queued jobs and a thread waiting on each one's result
    job_ids = enqueue_many(stack, WAITERS)
    store = get_store(stack.settings)
    before = clients(stack)
    threading.stack_size(256 * 1024)
    try:
        with ThreadPoolExecutor(max_workers=WAITERS) as pool:
            futures = {j: pool.submit(get_job(j, settings=stack.settings).result, 120) for j in job_ids}
            until(lambda: store._completions.waiting() == WAITERS, 60, "every waiter registered")
            # Then they hold far fewer connections than waiters: the pool and one subscription
            assert clients(stack) - before <= stack.settings.worker.redis_pool_size + 1
            # When every job ends (cancel stores its result and publishes the notice)
            for job_id in job_ids:
                cancel(job_id, "stopped by the test", settings=stack.settings)
            results = {j: f.result(timeout=120) for j, f in futures.items()}
    finally:
        threading.stack_size(0)
    # Then every waiter got its own job's result
    assert all(r["job_id"] == j and r["status"] == "cancelled" for j, r in results.items())
    assert store._completions.waiting() == 0


@pytest.mark.timeout(240)
def test_a_thousand_awaits_in_one_event_loop_share_one_subscription(stack: CeleryStack) -> None:
    # Given a thousand queued jobs
    job_ids = enqueue_many(stack, WAITERS)
    before = clients(stack)

    async def scenario() -> dict[str, dict[str, object]]:
        handles = [await suture.aio.get_job(j, settings=stack.settings) for j in job_ids]
        # When an event loop awaits all their results at once
        waiting = [asyncio.create_task(h.result(timeout_s=120)) for h in handles]
        await asyncio.sleep(1.0)
        # Then the loop holds a handful of connections, not one per waiter
        assert await asyncio.to_thread(clients, stack) - before <= stack.settings.worker.redis_pool_size + 1
        assert not any(t.done() for t in waiting)
        # When every job ends
        await asyncio.to_thread(
            lambda: [cancel(j, "stopped by the test", settings=stack.settings) for j in job_ids]
        )
        results = await asyncio.gather(*waiting)
        await suture.aio.close()
        return {h.id: r for h, r in zip(handles, results, strict=True)}

    results = asyncio.run(scenario())
    # Then every await got its own job's result
    assert all(r["job_id"] == j and r["status"] == "cancelled" for j, r in results.items())


def test_an_async_wait_times_out_and_an_unknown_job_is_not_found(stack: CeleryStack) -> None:
    [job_id] = enqueue_many(stack, 1)

    async def scenario() -> None:
        handle = await suture.aio.get_job(job_id, settings=stack.settings)
        with pytest.raises(suture.JobTimeout):
            await handle.result(timeout_s=0.3)
        assert await handle.status() == "queued"
        with pytest.raises(suture.JobNotFound):
            await suture.aio.get_job("0" * 32, settings=stack.settings)
        # a tenant's job is no job to another tenant
        mine = await suture.aio.enqueue("quiz", DOCUMENT, questions=2, tenant="a", settings=stack.settings)
        assert (await suture.aio.get_job(mine.id, settings=stack.settings, tenant="a")).id == mine.id
        with pytest.raises(suture.JobNotFound):
            await suture.aio.get_job(mine.id, settings=stack.settings, tenant="b")
        await suture.aio.close()

    asyncio.run(scenario())
