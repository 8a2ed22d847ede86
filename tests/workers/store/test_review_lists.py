"""Each tenant's review list is its own in the store, against a real Redis (issue 33, per-tenant lists).

Jobs are written through the store's own scripts (``create``, ``deliver``, ``resume``,
``conclude_review``): a tenant's soft-delivered jobs are read from its own sorted set, never filtered out
of a window of every tenant's, so another tenant's hundreds of newer jobs cannot push them out. A store
written before the tenants' lists existed is indexed at the first read.
"""

from __future__ import annotations

import uuid

import pytest
import redis

from suture.workers.store.job_store import JobStore
from suture.workers.store.keys import Keys
from suture.workers.store.reads import INDEX_BATCH

SPEC = {"contract": "quiz", "params": {"questions": 3}, "input": "Cells divide by mitosis.", "policy": None}
SOFT = {"status": "soft_delivered", "attempts": []}
WINDOW = 200  # the review page's window (``suture.workers.review.jobs.waiting``)


@pytest.fixture
def store(redis_url: str) -> JobStore:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    return JobStore(client, ttl_s=600, prefix=f"t{uuid.uuid4().hex}")


def soft_delivered(store: JobStore, tenant: str | None) -> str:
    """A job of ``tenant`` (None: the operator's) stored and soft-delivered by the store's scripts."""
    job_id, *_ = store.create(uuid.uuid4().hex, SPEC, deadline_s=10**10, tenant=tenant)
    assert store.deliver(job_id, SOFT)
    return job_id


def ids(entries: list[tuple[str, float]]) -> list[str]:
    return [job_id for job_id, _ in entries]


def test_another_tenants_445_newer_jobs_leave_a_tenants_list_unchanged(store: JobStore) -> None:
    # Given tenant A's soft-delivered job, and the operator's
    job_a = soft_delivered(store, "a")
    operators = soft_delivered(store, None)
    before = store.waiting_review(WINDOW, ["a"])
    assert ids(before) == [job_a]

    # When tenant B's 445 jobs end soft-delivered after them
    jobs_b = [soft_delivered(store, "b") for _ in range(445)]

    # Then the window of every job no longer reaches A's (what a filtered global window showed A)...
    assert job_a not in ids(store.waiting_review(WINDOW))
    # ...but A's own list is exactly as it was, and B's holds B's newest only
    assert store.waiting_review(WINDOW, ["a"]) == before
    assert ids(store.waiting_review(WINDOW, ["b"])) == jobs_b[::-1][:WINDOW]
    # And a reader of A's and the operator's lists gets both, newest first; nobody else gets the operator's
    assert ids(store.waiting_review(WINDOW, ["a", None])) == [operators, job_a]
    assert operators not in ids(store.waiting_review(WINDOW, ["b"]))


def test_a_job_leaves_its_tenants_list_when_resumed_or_concluded(store: JobStore) -> None:
    # Given two soft-delivered jobs of tenant A
    resumed, concluded = soft_delivered(store, "a"), soft_delivered(store, "a")
    # When one is resumed and the other accepted by a reviewer
    assert store.resume(resumed, SPEC, {"s": 1}, deadline_s=10**10)
    assert store.conclude_review(concluded, 0, SOFT | {"status": "delivered"})
    # Then A's list is empty; soft-delivered again, the resumed job is back on it
    assert store.waiting_review(WINDOW, ["a"]) == []
    assert store.deliver(resumed, SOFT)
    assert ids(store.waiting_review(WINDOW, ["a"])) == [resumed]


def test_entries_an_older_process_left_behind_are_dropped_as_they_are_read(store: JobStore) -> None:
    # Given A's list holding a job no longer soft-delivered (concluded by a process of an older version,
    # which cleared only the list of every job) and a job that expired from the store
    keys = Keys(store.prefix)
    live, stale, expired = (soft_delivered(store, "a") for _ in range(3))
    store.redis.hset(keys.job(stale), "status", "delivered")
    store.redis.delete(keys.job(expired))
    # When A's list is read
    found = store.waiting_review(WINDOW, ["a"])
    # Then only the live job is listed; the others left A's list, and the expired one every list
    assert ids(found) == [live]
    assert set(store.redis.zrange(keys.review_of("a"), 0, -1)) == {live}
    assert expired not in store.redis.zrange(keys.review(), 0, -1)


def test_a_store_from_before_the_tenants_lists_is_indexed_at_the_first_read(store: JobStore) -> None:
    # Given a store as an older version left it: soft-delivered jobs on the list of every job only
    # (more than one indexing batch of them), tenant A's oldest of all
    keys = Keys(store.prefix)
    job_a = soft_delivered(store, "a")
    older = [soft_delivered(store, "b") for _ in range(INDEX_BATCH + 500)]
    store.redis.delete(keys.review_of("a"), keys.review_of("b"), keys.review_indexed())
    # When tenant A's list is first read
    found = store.waiting_review(WINDOW, ["a"])
    # Then A's job is on it, and every other tenant's list was built too
    assert ids(found) == [job_a]
    assert store.redis.zcard(keys.review_of("b")) == len(older)
    # And the next read reads only what was listed since (the last entry indexed), not the whole list
    assert store.index_review() == 1
