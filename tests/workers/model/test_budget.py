"""Budgets shared through a real Redis: two workers' ``Budget``s draw on one pair of buckets per model."""

from __future__ import annotations

import time
import uuid

import pytest
import redis

from suture.config.simulator_sections import ModelRateLimit
from suture.workers.model.budget import Budget
from suture.workers.model.budget_math import Remaining


@pytest.fixture
def budgets(redis_url: str) -> tuple[Budget, Budget]:
    """Two budgets (as two worker processes would hold) over one Redis, on a fresh prefix."""
    client = redis.Redis.from_url(redis_url)
    prefix = f"b{uuid.uuid4().hex}"
    limits = {"m": ModelRateLimit(rpm=6, tpm=6_000), "t": ModelRateLimit(tpm=60_000)}
    return Budget(client, limits, prefix=prefix), Budget(client, limits, prefix=prefix)


def test_requests_are_shared_and_a_spent_budget_says_how_long(budgets: tuple[Budget, Budget]) -> None:
    # Given 6 RPM shared by two workers / When they alternate 7 small calls
    a, b = budgets
    taken = [(a if i % 2 else b).reserve("m", 10) for i in range(7)]
    # Then six go at once, the seventh waits about one refill interval (10 s) and took nothing
    assert [r.granted for r in taken] == [True] * 6 + [False]
    assert 9.5 < taken[-1].wait_s <= 10.0
    assert taken[-1].tokens == 0


def test_calls_deferred_together_get_successive_slots_one_refill_apart(
    budgets: tuple[Budget, Budget],
) -> None:
    # Given 6,000 TPM spent / When three 1,200-token calls are deferred one after another
    a, b = budgets
    assert a.reserve("m", 6_000).granted
    waits = [(a if i % 2 else b).reserve("m", 1_200).wait_s for i in range(3)]
    # Then the first waits for its 1,200 tokens (12 s), each next one 1,200 tokens' refill more
    assert waits == pytest.approx([12.0, 24.0, 36.0], abs=0.1)


def test_no_slot_lies_beyond_the_horizon(redis_url: str) -> None:
    # Given a budget whose deferrals may last at most 5 s / When calls queue up for minutes' worth
    budget = Budget(
        redis.Redis.from_url(redis_url), {"m": ModelRateLimit(rpm=6)}, horizon_s=5, prefix=uuid.uuid4().hex
    )
    waits = [budget.reserve("m", 1).wait_s for _ in range(10)]
    # Then six went, and every slot given is within 5 s
    assert waits[:6] == [0.0] * 6
    assert all(0 < w <= 5.0 for w in waits[6:])


def test_tokens_bind_before_requests(budgets: tuple[Budget, Budget]) -> None:
    # Given 6,000 TPM / When a 4,000-token call and then a 3,000-token call reserve
    a, b = budgets
    first, second = a.reserve("m", 4_000), b.reserve("m", 3_000)
    # Then the second waits for 1,000 tokens to refill: 10 s at 100 a second
    assert first.granted and not second.granted
    assert 9.5 < second.wait_s <= 10.0


def test_settling_refunds_an_overestimate(budgets: tuple[Budget, Budget]) -> None:
    # Given a 50,000-token reservation of 60,000 TPM / When it settles at 20,000
    a, b = budgets
    reservation = a.reserve("t", 50_000)
    assert not b.reserve("t", 30_000).granted
    a.settle(reservation, 20_000)
    # Then the other worker's 30,000-token call fits
    assert b.reserve("t", 30_000).granted


def test_headers_lower_the_budget_but_never_raise_it(budgets: tuple[Budget, Budget]) -> None:
    # Given a full budget / When the provider says only 1 request is left
    a, b = budgets
    a.correct("m", Remaining(requests=1, tokens=None))
    # Then one call goes and the next waits; a later, higher figure does not give any back
    assert b.reserve("m", 1).granted
    b.correct("m", Remaining(requests=6, tokens=6_000))
    assert not a.reserve("m", 1).granted


def test_a_429_blocks_every_worker_for_its_retry_after_and_gives_the_tokens_back(
    budgets: tuple[Budget, Budget],
) -> None:
    # Given a call that reserved 50,000 tokens / When the provider answers 429 retry-after 0.3 s
    a, b = budgets
    reservation = a.reserve("t", 50_000)
    a.block("t", 0.3, refund_tokens=reservation.tokens)
    # Then the other worker waits about 0.3 s, and after it the whole budget is there again
    held = b.reserve("t", 1)
    assert not held.granted and 0.2 < held.wait_s <= 0.3
    time.sleep(held.wait_s + 0.05)
    assert b.reserve("t", 55_000).granted


def test_an_unlimited_model_is_never_metered(budgets: tuple[Budget, Budget]) -> None:
    a, _ = budgets
    assert all(a.reserve("free", 10**9).granted for _ in range(100))
    a.block("free", 60.0)
    assert a.reserve("free", 1).granted


def test_bulk_calls_leave_the_interactive_share_of_the_budget(budgets: tuple[Budget, Budget]) -> None:
    # Given 6,000 TPM of which bulk calls must leave 10 % (600 tokens), and 5,000 tokens spent
    a, b = budgets
    assert a.reserve("m", 5_000, keep_share=0.1).granted
    # When a bulk call and then an interactive call each ask for 500 tokens
    bulk = b.reserve("m", 500, keep_share=0.1)
    interactive = a.reserve("m", 500)
    # Then the bulk call waits (it would leave 500 < 600), the interactive one goes at once
    assert not bulk.granted and bulk.tokens == 0
    assert 0 < bulk.wait_s <= 1.0  # 100 tokens short: 1 s of refill at 6,000 TPM
    assert interactive.granted and interactive.tokens == 500


def test_deferred_interactive_calls_do_not_queue_behind_deferred_bulk_calls(
    budgets: tuple[Budget, Budget],
) -> None:
    # Given a spent token budget and three bulk calls deferred one after another (slots 12, 24, 36 s on)
    a, b = budgets
    assert a.reserve("m", 6_000).granted
    bulk = [b.reserve("m", 1_200, keep_share=0.1).wait_s for _ in range(3)]
    # When an interactive call of the same size is deferred
    interactive = a.reserve("m", 1_200).wait_s
    # Then its slot is the one the budget can give it now, not one after the bulk calls
    assert interactive == pytest.approx(12.0, abs=0.1)
    assert interactive < bulk[-1]
