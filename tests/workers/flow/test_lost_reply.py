"""A step whose store write landed but whose reply was lost still sends the job's next step."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from tests.fixtures.inline_flow import ScriptedCaller, drain, inline_flow, new_job


@pytest.fixture
def client(redis_url: str) -> redis.Redis:
    return redis.Redis.from_url(redis_url, decode_responses=True)


def test_a_write_applied_but_answered_as_lost_still_sends_the_saved_next_step(client: redis.Redis) -> None:
    # Given a job whose first attempt leaves 2 bad questions (a surgical round comes next), and a store
    # whose state write reaches Redis but whose reply is lost (the retried write finds the job advanced)
    flow, dispatcher = inline_flow(client, ScriptedCaller(imbalanced=2))
    job_id = new_job(flow)
    real_save = flow.store.save_state

    def applied_then_lost(*args: Any, **kwargs: Any) -> bool:
        assert real_save(*args, **kwargs)
        return real_save(*args, **kwargs)  # the retry: the version moved on, so it reports "not applied"

    flow.store.save_state = applied_then_lost  # type: ignore[method-assign]
    # When the attempt runs
    outcome = flow.attempt(job_id, 1)
    flow.store.save_state = real_save  # type: ignore[method-assign]
    # Then it reports a duplicate but has sent the step the job saved (not left it for the watchdog)
    assert outcome == "duplicate"
    assert dispatcher.sent, "no next step sent: the job would wait stall_s for the watchdog"
    assert dispatcher.sent[0][0] in {"slice", "attempt", "deliver"}
    # And the job runs to delivery from there
    drain(flow, dispatcher)
    assert flow.store.status(job_id) == "delivered"
