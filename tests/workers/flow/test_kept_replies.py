"""A step whose store write fails re-runs with the model reply it already paid for, not a new call."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from suture.workers.errors import StoreUnavailable
from tests.fixtures.inline_flow import ScriptedCaller, drain, inline_flow, new_job


@pytest.fixture
def client(redis_url: str) -> redis.Redis:
    return redis.Redis.from_url(redis_url, decode_responses=True)


def test_an_attempt_whose_write_failed_reuses_its_reply_when_it_runs_again(client: redis.Redis) -> None:
    # Given a job and a store whose first state write fails (Redis cut off, or no replica acknowledged it)
    caller = ScriptedCaller(imbalanced=2)
    flow, dispatcher = inline_flow(client, caller)
    job_id = new_job(flow)
    real_save = flow.store.save_state
    failures = [StoreUnavailable("cut off")]

    def fails_once(*args: Any, **kwargs: Any) -> bool:
        if failures:
            raise failures.pop()
        return real_save(*args, **kwargs)

    flow.store.save_state = fails_once  # type: ignore[method-assign]
    # When the attempt runs, fails, and runs again (as the task re-runs it through an outage)
    with pytest.raises(StoreUnavailable):
        flow.attempt(job_id, 1, token="t")
    outcome = flow.attempt(job_id, 1, token="t")
    flow.store.save_state = real_save  # type: ignore[method-assign]
    # Then the model was called once, and the reply it paid for is the one applied
    assert outcome == "applied"
    assert caller.calls == ["full"]
    drain(flow, dispatcher)
    assert flow.store.status(job_id) == "delivered"


def test_a_slice_whose_write_failed_reuses_its_reply_when_it_runs_again(client: redis.Redis) -> None:
    # Given a job in its surgical round, and a store whose first slice write fails
    caller = ScriptedCaller(imbalanced=2)
    flow, dispatcher = inline_flow(client, caller)
    job_id = new_job(flow)
    flow.attempt(job_id, 1)
    kind, args = dispatcher.sent.pop(0)
    assert kind == "slice"
    _, n, pointer = args
    real_put = flow.store.put_slice
    failures = [StoreUnavailable("cut off")]

    def fails_once(*a: Any, **kw: Any) -> Any:
        if failures:
            raise failures.pop()
        return real_put(*a, **kw)

    flow.store.put_slice = fails_once  # type: ignore[method-assign]
    # When the slice runs, fails, and runs again
    before = len(caller.calls)
    with pytest.raises(StoreUnavailable):
        flow.surgical_slice(job_id, n, pointer, token="t")
    assert flow.surgical_slice(job_id, n, pointer, token="t") == "stored"
    flow.store.put_slice = real_put  # type: ignore[method-assign]
    # Then that slice's model call was paid once
    assert len(caller.calls) == before + 1
