"""The Redis job store against a real Redis: every once-only write happens once, whatever the order."""

from __future__ import annotations

import socket
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis

from suture.config.settings import load_settings
from suture.workers.errors import JobNotFound, StoreUnavailable
from suture.workers.runtime.watchdog import WatchdogClock
from suture.workers.store.job_store import JobStore, get_store

SPEC = {"contract": "quiz", "params": {"questions": 3}, "input": "Cells divide by mitosis.", "policy": None}


@pytest.fixture
def store(redis_url: str) -> JobStore:
    return JobStore(
        redis.Redis.from_url(redis_url, decode_responses=True), ttl_s=600, prefix=f"t{uuid.uuid4().hex}"
    )


def new_job(store: JobStore, key: str | None = None) -> str:
    job_id, *_ = store.create(uuid.uuid4().hex, SPEC, deadline_s=10**10, idempotency_key=key)
    return job_id


def test_created_job_reads_back_queued(store: JobStore) -> None:
    # Given a new job / When it is loaded / Then spec, status and version are as stored
    job_id = new_job(store)
    record = store.load(job_id)
    assert (record.spec, record.status, record.version, record.result) == (SPEC, "queued", 0, None)


def test_idempotency_key_returns_the_first_job(store: JobStore) -> None:
    # Given a job enqueued with a key / When the same key is used again / Then the first job comes back
    first, created_first, _ = store.create("a" * 32, SPEC, deadline_s=1, idempotency_key="k1")
    again, created_again, _ = store.create("b" * 32, SPEC, deadline_s=1, idempotency_key="k1")
    assert (first, created_first, again, created_again) == ("a" * 32, True, "a" * 32, False)
    with pytest.raises(JobNotFound):
        store.load("b" * 32)


def test_unknown_job_is_a_clear_error(store: JobStore) -> None:
    with pytest.raises(JobNotFound, match="no such job: nope"):
        store.status("nope")


@pytest.mark.parametrize("contenders", [2, 8])
def test_an_attempt_applies_once_however_many_deliveries_race(store: JobStore, contenders: int) -> None:
    # Given one job / When several deliveries of attempt 1 save concurrently / Then exactly one applies
    job_id = new_job(store)
    with ThreadPoolExecutor(contenders) as pool:
        applied = list(pool.map(lambda i: store.save_state(job_id, 0, {"by": i}), range(contenders)))
    assert applied.count(True) == 1
    record = store.load(job_id)
    assert record.version == 1
    assert record.state == {"by": applied.index(True)}


def test_a_slice_counted_as_stored_but_absent_is_never_stored_empty(store: JobStore) -> None:
    # Given a slice the task's opening saw stored (on a primary a failover then replaced), absent here
    job_id = new_job(store)
    store.put_slice(job_id, 2, "/q/0", {"text": "r0"}, expected=2)
    # When it is counted without a reply / Then it fails as an outage (the task re-runs), storing nothing
    with pytest.raises(StoreUnavailable):
        store.put_slice(job_id, 2, "/q/1", {}, expected=2)
    assert set(store.slices(job_id, 2)) == {"/q/0"}
    # ...and a reply already there is counted as before
    assert store.put_slice(job_id, 2, "/q/0", {}, expected=2).stored is False


@pytest.mark.parametrize("order", [["/q/0", "/q/1", "/q/2"], ["/q/2", "/q/0", "/q/0", "/q/1", "/q/1"]])
def test_slices_are_stored_once_and_the_merge_claimed_once(store: JobStore, order: list[str]) -> None:
    # Given surgical attempt 2 with 3 targets / When slices arrive (some redelivered) / Then one claim
    job_id = new_job(store)
    outcomes = [store.put_slice(job_id, 2, p, {"text": f"{p}#{i}"}, expected=3) for i, p in enumerate(order)]
    assert sum(o.merge_claimed for o in outcomes) == 1
    assert sum(o.stored for o in outcomes) == 3
    # the first reply of each pointer is the one kept
    assert {p: v["text"].split("#")[0] for p, v in store.slices(job_id, 2).items()} == {p: p for p in order}
    assert all(v["text"] == f"{p}#{order.index(p)}" for p, v in store.slices(job_id, 2).items())


def test_delivery_happens_once_and_ends_the_job(store: JobStore) -> None:
    # Given a running job / When two deliveries race / Then the first result stands and saves are refused
    job_id = new_job(store)
    assert store.deliver(job_id, {"status": "delivered", "n": 1})
    assert not store.deliver(job_id, {"status": "failed", "n": 2})
    assert store.result(job_id) == {"status": "delivered", "n": 1}
    assert store.status(job_id) == "delivered"
    assert not store.save_state(job_id, 0, {"late": True})
    assert job_id not in store.watchlist.overdue(10**11)


def test_resume_reopens_only_a_soft_delivered_job_and_keeps_history(store: JobStore) -> None:
    job_id = new_job(store)
    store.deliver(job_id, {"status": "delivered", "attempts": []})
    assert not store.resume(job_id, SPEC, {"s": 1}, deadline_s=10**10)
    other = new_job(store)
    store.deliver(other, {"status": "soft_delivered", "attempts": []})
    # When resumed / Then it is queued again, its old result is history (empty lists stay lists)
    assert store.resume(other, SPEC | {"feedback": ["shorter"]}, {"s": 2}, deadline_s=10**10)
    record = store.load(other)
    assert (record.status, record.round, record.result, record.state) == ("queued", 1, None, {"s": 2})
    assert store.history(other) == [{"status": "soft_delivered", "attempts": []}]


def test_unfinished_executions_are_counted_per_task_once_per_token(store: JobStore) -> None:
    # Given a job / When attempt 1 opens in executions a, b, b again (an in-process re-run) and c,
    # and attempt 2 once
    job_id = new_job(store)
    counts = [store.open_task(job_id, "attempt:1", token=t).unfinished for t in ("a", "b", "b", "c")]
    other = store.open_task(job_id, "attempt:2", token="a").unfinished
    # Then each execution counted once, per task, and the job is running
    assert (counts, other) == ([1, 2, 2, 3], 1)
    assert store.status(job_id) == "running"
    # When b ends (its close repeated) and a ends / Then only c is left; a new execution counts from there
    assert [store.close_task(job_id, "attempt:1", t) for t in ("b", "b", "a")] == [2, 2, 1]
    assert store.open_task(job_id, "attempt:1", token="d").unfinished == 2
    assert store.close_task(job_id, "attempt:2", "a") == 0


def test_overdue_lists_only_jobs_past_their_deadline(store: JobStore) -> None:
    late, *_ = store.create("late", SPEC, deadline_s=100)
    store.create("early", SPEC, deadline_s=300)
    assert store.watchlist.overdue(200) == [late]


def test_stalled_lists_running_jobs_whose_tasks_stopped_opening(store: JobStore) -> None:
    # Given a job never picked up, one whose task just opened, and one delivered
    idle, busy, done = new_job(store), new_job(store), new_job(store)
    store.open_task(busy, "attempt:1")
    store.deliver(done, {"status": "delivered"})
    now = time.time()
    # When the watchdog asks which made no progress since a moment ago / since a minute from now
    recent = store.watchlist.stalled(now - 60)
    later = store.watchlist.stalled(now + 60)
    # Then only the never-opened job counts as stalled against its creation time, and only running
    # jobs are ever listed
    assert recent == [] and set(later) == {idle, busy}
    store.watchlist.touch(idle, now + 120)
    assert store.watchlist.stalled(now + 60) == [busy]


def test_the_live_workers_bulk_slots_are_summed_and_a_silent_worker_s_dropped(store: JobStore) -> None:
    # Given two model workers and a control worker (no model slots) beating, and one silent for long
    now = time.time()
    store.watchlist.beat("model-1", now, 90)
    store.watchlist.beat("model-2", now - 5, 45)
    store.watchlist.beat("control", now, 0)
    store.watchlist.beat("gone", now - 600, 90)
    # When the dispatcher reads the slots of the workers heard from within a minute
    live = store.watchlist.model_slots(now, silent_s=60)
    # Then the live ones count and the silent one is forgotten, until it beats again
    assert live == 135
    assert set(store.redis.hkeys(f"{store.prefix}:workers:slots")) == {"model-1", "model-2", "control"}
    store.watchlist.beat("gone", now, 90)
    assert store.watchlist.model_slots(now, silent_s=60) == 225


def test_unreachable_redis_is_a_one_line_error_without_password() -> None:
    client = redis.Redis.from_url("redis://:hunter2@127.0.0.1:1/0", decode_responses=True)
    with pytest.raises(StoreUnavailable) as caught:
        JobStore(client, ttl_s=60).status("x")
    assert "hunter2" not in str(caught.value) and "\n" not in str(caught.value)


def test_only_one_watchdog_clock_fires_per_interval(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    client.delete("suture:watchdog:lock")
    fired: list[str] = []
    clocks = [WatchdogClock(client, lambda n=n: fired.append(n), interval_s=30, owner=n) for n in ("a", "b")]
    assert [c.tick() for c in clocks] == [True, False]
    assert fired == ["a"]
    client.delete("suture:watchdog:lock")


def test_a_redis_that_stops_answering_is_an_outage_within_the_timeout() -> None:
    # Given a "Redis" that accepts connections and never answers (a host gone without a reset)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        url = f"redis://127.0.0.1:{listener.getsockname()[1]}/0"
        store = get_store(load_settings(overrides={"redis_url": url, "worker": {"redis_timeout_s": 0.3}}))
        # When the store asks it something, Then it is an outage (retried by tasks), not a hang
        started = time.monotonic()
        with pytest.raises(StoreUnavailable, match="Timeout"):
            store.status("any-job")
        assert time.monotonic() - started < 10


def test_the_store_client_has_the_configured_timeouts() -> None:
    # Given settings with a 12 s Redis timeout, When the process's store is built
    settings = load_settings(
        overrides={"redis_url": "redis://127.0.0.1:6399/0", "worker": {"redis_timeout_s": 12}}
    )
    kwargs = get_store(settings).redis.connection_pool.connection_kwargs
    # Then its connections time out (connecting: network.connect_timeout_s) and probe idle peers
    # instead of waiting for ever
    assert (kwargs["socket_timeout"], kwargs["socket_connect_timeout"], kwargs["socket_keepalive"]) == (
        12,
        5,
        True,
    )


def test_a_result_built_from_an_older_state_is_not_stored(store: JobStore) -> None:
    # Given a job whose state moved on to version 1 after a cancel read it at version 0
    job_id = new_job(store)
    assert store.save_state(job_id, 0, {"applied": 1})
    result = {"status": "cancelled", "reason": "r"}
    # When that result is stored at version 0 / Then nothing is stored; at version 1 it is, once
    assert store.deliver_at(job_id, 0, result) is None and store.result(job_id) is None
    assert store.deliver_at(job_id, 1, result) is True
    assert store.deliver_at(job_id, 1, {"status": "failed", "reason": "x"}) is False
    assert store.result(job_id) == result and store.status(job_id) == "cancelled"


def test_a_late_attempt_joins_the_stored_result_once_with_its_totals(store: JobStore) -> None:
    # Given a job failed at its deadline with no attempt applied
    job_id = new_job(store)
    usage = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0, "reasoning_tokens": 0}
    store.deliver(
        job_id, {"status": "failed", "attempts": [], "usage": usage, "cost_usd": 0.0, "latency_ms": 0}
    )
    late = {"n": 1, "mode": "full", "usage": {"input_tokens": 100, "output_tokens": 50}, "cost_usd": 0.0001}
    late |= {"latency_ms": 9000.0}

    # When its attempt comes back, twice (a redelivery)
    added = [store.notes.add_late_attempt(job_id, late), store.notes.add_late_attempt(job_id, late)]

    # Then it is counted once, marked late, in the attempts and the totals
    assert added == [True, False]
    result = store.result(job_id)
    assert result is not None
    assert [(a["n"], a["late"]) for a in result["attempts"]] == [(1, True)]
    assert (result["usage"]["input_tokens"], result["usage"]["output_tokens"]) == (100, 50)
    assert (result["cost_usd"], result["latency_ms"]) == (0.0001, 9000.0)


def test_a_late_attempt_of_a_job_still_running_changes_nothing(store: JobStore) -> None:
    job_id = new_job(store)
    assert store.notes.add_late_attempt(job_id, {"n": 1, "cost_usd": 0.1}) is False
    assert store.result(job_id) is None


def test_running_tasks_are_those_of_the_next_attempt_started_and_not_finished(store: JobStore) -> None:
    # Given attempt 1 applied (its execution stays counted), and attempt 2's slices: one stored, one running
    job_id = new_job(store)
    store.open_task(job_id, "attempt:1", token="a")
    assert store.save_state(job_id, 0, {"v": 1})
    store.open_task(job_id, "slice:2:/questions/0", token="b", n=2, pointer="/questions/0")
    store.open_task(job_id, "slice:2:/questions/1", token="c", n=2, pointer="/questions/1")
    store.put_slice(job_id, 2, "/questions/1", {"text": "ok"}, expected=2)

    # When the running tasks are asked for, Then only the slice still out is named
    assert store.running_tasks(job_id, version=1) == ["slice:2:/questions/0"]
