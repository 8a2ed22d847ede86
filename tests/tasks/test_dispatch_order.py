"""The dispatcher's order: interactive before bulk with a share kept for bulk; tenants by weighted
round-robin."""

from __future__ import annotations

from collections import Counter

import pytest

from suture.tasks.dispatch_order import (
    DispatchTurns,
    FillRamp,
    bulk_credit_after,
    bulk_fill,
    bulk_slot_limit,
    next_class,
    next_tenant,
    tail_fill,
    under_share,
)


def test_interactive_goes_first_and_bulk_alone_takes_every_turn() -> None:
    turns = DispatchTurns()
    assert next_class({"interactive": True, "bulk": False}, turns, 0.1) == "interactive"
    assert next_class({"interactive": False, "bulk": True}, turns, 0.1) == "bulk"
    assert next_class({"interactive": False, "bulk": False}, turns, 0.1) is None


@pytest.mark.parametrize(("share", "bulk_turns"), [(0.1, 10), (0.25, 25), (0.0, 0), (1.0, 100)])
def test_while_both_wait_bulk_gets_its_share_of_turns(share: float, bulk_turns: int) -> None:
    # Given both classes waiting for 100 dispatches / Then bulk takes exactly its share, spread out
    turns = DispatchTurns()
    chosen = [next_class({"interactive": True, "bulk": True}, turns, share) for _ in range(100)]
    assert chosen.count("bulk") == bulk_turns
    if share == 0.1:
        assert [i for i, c in enumerate(chosen) if c == "bulk"][:3] == [9, 19, 29]


def test_credit_is_not_saved_up_while_bulk_does_not_wait() -> None:
    # Given interactive alone for a while / When bulk arrives / Then it gets no burst of saved turns
    turns = DispatchTurns()
    for _ in range(50):
        next_class({"interactive": True, "bulk": False}, turns, 0.1)
    chosen = [next_class({"interactive": True, "bulk": True}, turns, 0.1) for _ in range(9)]
    assert chosen == ["interactive"] * 9


def test_a_worker_s_bulk_credit_grows_per_interactive_call_and_is_spent_by_a_bulk_one() -> None:
    # Given a worker taking interactive calls while looking at interactive first: a tenth of a turn each
    credit = 0.0
    for _ in range(10):
        credit = bulk_credit_after(credit, 0.1, bulk_first=False, served="interactive")
    assert credit == pytest.approx(1.0)
    # ...capped at one whole turn, however long the stream
    assert bulk_credit_after(1.0, 0.1, bulk_first=False, served="interactive") == 1.0
    # When it looks at bulk first and takes a bulk call / Then the turn is spent
    assert bulk_credit_after(1.0, 0.1, bulk_first=True, served="bulk") == 0.0


def test_a_worker_s_bulk_credit_is_dropped_when_the_queue_it_looked_at_first_was_empty() -> None:
    # Looking at bulk first yet taking interactive: bulk had nothing, so no credit is kept for later
    assert bulk_credit_after(1.0, 0.1, bulk_first=True, served="interactive") == 0.0
    # Looking at interactive first yet taking bulk: interactive had nothing; bulk owes nothing either
    assert bulk_credit_after(0.7, 0.1, bulk_first=False, served="bulk") == 0.0


def test_tenants_are_served_by_weight_and_interleaved() -> None:
    # Given tenants a (weight 3) and b (weight 1) both waiting
    turns = DispatchTurns()
    chosen = [next_tenant("bulk", ["a", "b"], {"a": 3}, turns) for _ in range(40)]
    # Then a gets three turns for each of b's, never more than three in a row
    assert Counter(chosen) == {"a": 30, "b": 10}
    assert "aaaa" not in "".join(chosen) and "bb" not in "".join(chosen)


def test_equal_weights_alternate_and_a_new_tenant_is_served_at_once() -> None:
    turns = DispatchTurns()
    first = [next_tenant("interactive", ["a"], {}, turns) for _ in range(5)]
    # When b starts waiting after a long run of a's / Then b is served within two turns, then they alternate
    after = [next_tenant("interactive", ["a", "b"], {}, turns) for _ in range(6)]
    assert first == ["a"] * 5
    assert Counter(after) == {"a": 3, "b": 3} and after[:2].count("b") == 1


def test_no_tenant_waiting_gives_none() -> None:
    assert next_tenant("bulk", [], {}, DispatchTurns()) is None


def test_a_tenant_alone_is_never_under_its_share() -> None:
    assert not under_share({"a": 1000}, "a", {})
    assert not under_share({}, "a", {})


def test_beside_another_tenant_the_one_running_less_than_its_weighted_share_is_under() -> None:
    # Given a running 100 jobs and b 10 / Then b is under its half, a is not
    running = {"a": 100, "b": 10}
    assert under_share(running, "b", {}) and not under_share(running, "a", {})
    # ...unless b weighs so little that 10 of the 110 is its due
    assert not under_share(running, "b", {"a": 10})
    # ...and a tenant with nothing running yet is under, unless it weighs nothing
    assert under_share(running, "c", {}) and not under_share(running, "c", {"c": 0})


def test_a_tenant_less_than_one_job_under_its_share_is_not_under() -> None:
    # Given a few jobs running: b's share of 3 is 1.5 (equal weights), it runs 1
    assert not under_share({"a": 2, "b": 1}, "b", {})
    # ...a running none beside one running 2 is a whole job under its share of 1
    assert under_share({"a": 2}, "b", {}) and not under_share({"a": 1}, "b", {})


def test_a_tenant_held_back_a_moment_keeps_its_standing() -> None:
    # Given a (weight 3) and b (weight 1) both waiting, b not eligible for a few turns
    turns = DispatchTurns()
    held = [next_tenant("bulk", ["a", "b"], {"a": 3}, turns, eligible=["a"]) for _ in range(4)]
    assert held == ["a"] * 4
    # When b may go again / Then the order over the next 8 turns is by weight, as if b had never waited
    chosen = [next_tenant("bulk", ["a", "b"], {"a": 3}, turns) for _ in range(8)]
    assert Counter(chosen) == {"a": 6, "b": 2}
    # ...and no waiting tenant eligible gives none
    assert next_tenant("bulk", ["a"], {}, turns, eligible=[]) is None


@pytest.mark.parametrize(
    ("concurrency", "share", "limit"),
    [
        (100, 0.1, 90),
        (10, 0.1, 9),
        (4, 0.1, 3),
        (2, 0.5, 1),
        (1, 0.1, None),
        (100, 0.0, None),
        (100, 0.25, 75),
    ],
)
def test_a_worker_keeps_its_share_of_slots_for_interactive_calls_and_bulk_at_least_one(
    concurrency: int, share: float, limit: int | None
) -> None:
    assert bulk_slot_limit(concurrency, share) == limit


@pytest.mark.parametrize(
    ("live_slots", "per_slot", "in_flight", "more"),
    [
        (90, 1.5, 0, 135),  # an idle cluster: enough jobs to keep every bulk slot busy and one more each half
        (90, 1.5, 100, 35),
        (90, 1.5, 135, 0),
        (90, 1.5, 400, 0),  # more in flight than that (a cap lowered, a worker gone): none, never negative
        (3, 1.5, 0, 5),  # rounded up: a small cluster still gets its share
        (0, 1.5, 0, 0),  # no worker reported its slots yet: the ready target alone feeds
        (90, 0.0, 0, 0),  # turned off
    ],
)
def test_bulk_jobs_are_kept_in_flight_in_proportion_to_the_live_bulk_slots(
    live_slots: int, per_slot: float, in_flight: int, more: int
) -> None:
    assert bulk_fill(live_slots, per_slot, in_flight) == more


@pytest.mark.parametrize(
    ("in_flight", "waiting", "more"),
    [
        (135, 30, 30),  # a batch's last 30 go now, beside the 135 running, not as a wave of 30 after them
        (135, 67, 67),  # up to half the fill (135 x 0.5 = 67.5)
        (135, 68, 0),  # more than that wait: the fill and its ramp pace them
        (150, 30, 15),  # at most fill + waiting in flight
        (200, 10, 0),  # never negative
        (0, 5, 5),  # a small batch on an idle cluster
    ],
)
def test_a_batchs_last_few_jobs_go_with_the_jobs_in_flight(in_flight: int, waiting: int, more: int) -> None:
    assert tail_fill(90, 1.5, in_flight, waiting, 0.5) == more


def test_the_tail_keeps_jobs_in_flight_bounded_however_jobs_trickle_in() -> None:
    # Given a producer that keeps a few bulk jobs waiting at every pass
    in_flight = 0
    for _ in range(1000):
        # When each pass sends what the tail allows (nothing ends meanwhile)
        in_flight += tail_fill(90, 1.5, in_flight, 3, 0.5)
    # Then no more than the fill and those few are ever in flight
    assert in_flight == 135 + 3
    # ...and turned off, or with no slots known, the tail sends nothing
    assert tail_fill(90, 1.5, 0, 3, 0.0) == 0
    assert tail_fill(0, 1.5, 0, 3, 0.5) == 0


def test_the_fill_is_earned_by_jobs_that_end_and_never_saved_for_a_burst() -> None:
    ramp = FillRamp(per_slot=1.5)
    # Given a first look at 90 jobs in flight / Then nothing is earned by looking
    ramp.observe(90)
    assert ramp.allowed(45) == 0
    # When 2 are sent and 2 others end / Then the 2 that ended earn 3, and the 2 sent are not taken for ends
    ramp.sent()
    ramp.sent()
    ramp.observe(90)
    assert ramp.allowed(45) == 3
    # When the limit is lower than the credit / Then the credit is cut to it, not saved
    assert ramp.allowed(1) == 1
    assert ramp.allowed(45) == 1
    ramp.spend()
    assert ramp.allowed(45) == 0
    # When no bulk job waits for a while / Then the next batch starts afresh: the old batch's ends earn
    # nothing
    ramp.stop()
    ramp.observe(0)
    assert ramp.allowed(135) == 0
