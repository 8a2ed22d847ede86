"""Running bulk jobs per tenant over a sliding window, and the lane each job's calls take, on a real Redis."""

from __future__ import annotations

import uuid

import pytest
import redis

from suture.config.dispatch_settings import DispatchSettings
from suture.workers.runtime import lanes
from suture.workers.runtime.lanes import Lanes
from suture.workers.store.keys import Keys
from suture.workers.store.tenant_load import TenantLoad


@pytest.fixture
def load(redis_url: str) -> TenantLoad:
    prefix = f"t{uuid.uuid4().hex}"
    client = redis.Redis.from_url(redis_url)
    client.zadd(Keys(prefix).deadlines(), {f"job-{i}": 1e10 for i in range(5)} | {"running": 1e10})
    return TenantLoad(client, prefix, window_s=60)


def test_each_job_counts_once_however_many_steps_it_sends(load: TenantLoad) -> None:
    # Given tenant a's job sending three steps and a second job, and b's one job (all unfinished)
    for now_s in (100.0, 101.0, 102.0):
        load.touch("bulk", "a", "job-1", now_s)
    load.touch("bulk", "a", "job-2", 103.0)
    load.touch("bulk", "b", "job-3", 103.0)
    # Then each job counts once, for its tenant
    assert load.running("bulk", 104.0) == {"a": 2, "b": 1}
    assert load.running("interactive", 104.0) == {}


def test_a_finished_job_no_longer_counts(load: TenantLoad, redis_url: str) -> None:
    # Given two running jobs of tenant a / When one ends (it leaves the unfinished jobs' deadlines)
    load.touch("bulk", "a", "job-1", 100.0)
    load.touch("bulk", "a", "job-2", 100.0)
    redis.Redis.from_url(redis_url).zrem(load._deadlines, "job-1")
    # Then only the other counts, the moment the counts are read
    assert load.running("bulk", 101.0) == {"a": 1}


def test_a_job_that_sent_nothing_within_the_window_no_longer_counts(load: TenantLoad) -> None:
    load.touch("bulk", "a", "job-1", 100.0)
    load.touch("bulk", "a", "running", 150.0)
    load.touch("bulk", "b", "job-2", 100.0)
    # 61 s after the first steps: only the job that stepped since counts, and b (idle) is gone
    assert load.running("bulk", 161.0) == {"a": 1}


def test_a_tenant_beside_a_heavier_one_goes_ahead(load: TenantLoad, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given tenant a running 30 bulk jobs alone
    monkeypatch.setattr(lanes, "REFRESH_S", 0.0)  # read the counts afresh on every call
    load._r.zadd(load._deadlines, {f"a{i}": 1e10 for i in range(30)} | {"b0": 1e10})
    chosen = Lanes(load, DispatchSettings())
    for i in range(30):
        chosen.note("bulk", "a", f"a{i}")
    # Then alone it does not go ahead (there is no one to go ahead of)
    assert not chosen.ahead("bulk", "a", "a0")
    # When tenant b's first job sends its call / Then b goes ahead, and a still does not
    assert chosen.ahead("bulk", "b", "b0")
    assert not chosen.ahead("bulk", "a", "a1")
    # ...interactive calls and calls of unknown tenant never do (interactive has a queue of its own)
    assert not chosen.ahead("interactive", "b", "b1") and not chosen.ahead("bulk", None, "x")
