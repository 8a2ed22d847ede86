"""The dispatcher's order: interactive before bulk with a share kept for bulk; tenants by weighted round-robin."""

from __future__ import annotations

from collections import Counter

import pytest

from suture.tasks.dispatch_order import DispatchTurns, next_class, next_tenant


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
