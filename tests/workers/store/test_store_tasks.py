"""The job store's one-round-trip task reads and its apply-and-deliver write, against a real Redis."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis

from suture.workers.errors import JobNotFound
from suture.workers.store.job_store import JobStore

SPEC = {"contract": "quiz", "params": {"questions": 3}, "input": "Cells divide by mitosis.", "policy": None}
RESULT = {"job_id": "x", "status": "delivered", "reason": "ok", "output": {"title": "t"}}


@pytest.fixture
def store(redis_url: str) -> JobStore:
    return JobStore(
        redis.Redis.from_url(redis_url, decode_responses=True), ttl_s=600, prefix=f"t{uuid.uuid4().hex}"
    )


def new_job(store: JobStore) -> str:
    job_id, *_ = store.create(uuid.uuid4().hex, SPEC, deadline_s=10**10)
    return job_id


@pytest.mark.parametrize("deliveries", [1, 3])
def test_opening_a_task_counts_it_marks_the_job_running_and_reads_the_job(
    store: JobStore, deliveries: int
) -> None:
    # Given a queued job with a stored surgical action
    job_id = new_job(store)
    store.put_action(job_id, 2, {"n": 2})
    # When a task opens it in `deliveries` executions
    openings = [store.open_task(job_id, "attempt:1") for _ in range(deliveries)]
    # Then each opening counted one more unfinished execution, and the job reads back running with its action
    assert [o.unfinished for o in openings] == list(range(1, deliveries + 1))
    record = openings[-1].record
    assert (record.spec, record.status, record.action(2), record.action(3)) == (
        SPEC,
        "running",
        {"n": 2},
        None,
    )
    assert store.open_task(job_id, "attempt:2").unfinished == 1  # counted per task


def test_a_slice_whose_reply_is_stored_is_not_counted(store: JobStore) -> None:
    # Given a job with the reply of /questions/0 stored for attempt 2
    job_id = new_job(store)
    store.put_slice(job_id, 2, "/questions/0", {"text": "r0"}, expected=2)
    # When both slices open, and the merge opens with every slice
    stored = store.open_task(job_id, "slice:2:/questions/0", n=2, pointer="/questions/0")
    missing = store.open_task(job_id, "slice:2:/questions/1", n=2, pointer="/questions/1")
    merge = store.open_task(job_id, "merge:2", n=2, slices=True)
    # Then the stored one is seen and not counted, the missing one is counted, the merge sees the replies
    assert (stored.slice_stored, stored.unfinished) == (True, 0)
    assert (missing.slice_stored, missing.unfinished) == (False, 1)
    assert merge.slices == {"/questions/0": {"text": "r0"}}


def test_opening_an_unknown_job_is_a_clear_error_and_writes_nothing(store: JobStore) -> None:
    # Given no such job / When a task opens it / Then JobNotFound, and no counter was created
    with pytest.raises(JobNotFound, match="no such job: nope"):
        store.open_task("nope", "attempt:1")
    assert not store.redis.exists(f"{store.prefix}:job:nope:flags")


@pytest.mark.parametrize("contenders", [1, 2, 8])
def test_apply_and_deliver_happens_once_however_many_deliveries_race(
    store: JobStore, contenders: int
) -> None:
    # Given a job at version 0
    job_id = new_job(store)
    # When `contenders` deliveries of attempt 1 apply and deliver at once
    with ThreadPoolExecutor(contenders) as pool:
        won = list(pool.map(lambda _: store.save_and_deliver(job_id, 0, {"v": 1}, RESULT), range(contenders)))
    # Then exactly one wins; the job holds that state and result and left the watchdog's list
    assert won.count(True) == 1
    record = store.load(job_id)
    assert (record.version, record.state, record.status, record.result) == (1, {"v": 1}, "delivered", RESULT)
    assert store.watchlist.overdue(now_s=10**11) == []
    assert store.wait_result(job_id, timeout_s=0.1) == RESULT


@pytest.mark.parametrize(("expected_version", "already_delivered"), [(1, False), (0, True)])
def test_apply_and_deliver_refuses_a_stale_version_or_a_delivered_job(
    store: JobStore, expected_version: int, already_delivered: bool
) -> None:
    # Given a job at version 0, delivered or not
    job_id = new_job(store)
    if already_delivered:
        store.deliver(job_id, RESULT | {"status": "failed"})
    # When attempt (expected_version + 1) applies and delivers
    won = store.save_and_deliver(job_id, expected_version, {"v": 9}, RESULT)
    # Then nothing changed
    record = store.load(job_id)
    assert not won
    assert (record.version, record.state) == (0, None)
    assert record.status == ("failed" if already_delivered else "queued")


def test_apply_and_deliver_of_an_unknown_job_is_a_clear_error(store: JobStore) -> None:
    with pytest.raises(JobNotFound):
        store.save_and_deliver("nope", 0, {}, RESULT)


def test_a_saved_step_stores_its_surgical_action_once_and_only_when_it_applies(store: JobStore) -> None:
    # Given a job at version 0
    job_id = new_job(store)
    # When attempt 1 is saved with the action of surgical attempt 2, and a duplicate save of attempt 1
    # carries another action 2
    applied = store.save_state(job_id, 0, {"v": 1}, action=(2, {"n": 2, "by": "first"}))
    duplicate = store.save_state(job_id, 0, {"v": "dup"}, action=(2, {"n": 2, "by": "duplicate"}))
    # Then the first save stored state and action together; the duplicate changed neither
    record = store.load(job_id)
    assert (applied, duplicate) == (True, False)
    assert (record.version, record.state, record.action(2)) == (1, {"v": 1}, {"n": 2, "by": "first"})
    # ...and an action stored before (by a stall nudge's put_action) is kept: the first writer wins
    store.put_action(job_id, 3, {"n": 3, "by": "nudge"})
    assert store.save_state(job_id, 1, {"v": 2}, action=(3, {"n": 3, "by": "step"}))
    assert store.load(job_id).action(3) == {"n": 3, "by": "nudge"}
