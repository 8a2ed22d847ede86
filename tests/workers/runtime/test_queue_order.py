"""The order a worker reads its queues on Redis: interactive model calls first, then bulk ahead, then bulk."""

from __future__ import annotations

import pytest

from suture.workers.runtime.app import (
    ALL_QUEUES,
    BULK_AHEAD_QUEUE,
    BULK_MODEL_QUEUE,
    MODEL_QUEUE,
)
from suture.workers.runtime.queue_order import ClassFirstCycle, routed_to


def reads(cycle: ClassFirstCycle, served: list[str]) -> list[list[str]]:
    """The order asked of Redis before each message, the message coming from ``served[i]``'s queue."""
    orders = []
    for queue in served:
        orders.append(cycle.consume(len(ALL_QUEUES)))
        cycle.rotate(queue)
    return orders


def test_the_model_queues_are_read_in_class_order_whatever_the_rotation() -> None:
    # Given a worker consuming every queue, with kombu's rotation moving each queue served to the end
    cycle = ClassFirstCycle(list(ALL_QUEUES))
    # When it takes bulk calls (interactive was empty), then control messages
    orders = reads(cycle, [BULK_MODEL_QUEUE, BULK_AHEAD_QUEUE, "suture.control", "suture.control"])
    # Then interactive is always listed first, then bulk ahead, then bulk; the others still take turns
    for order in orders:
        assert order.index(MODEL_QUEUE) < order.index(BULK_AHEAD_QUEUE) < order.index(BULK_MODEL_QUEUE)
        assert sorted(order) == sorted(ALL_QUEUES)
    assert orders[1][0] == MODEL_QUEUE and orders[3][0] != "suture.control"


@pytest.mark.parametrize(("share", "bulk_firsts"), [(0.1, 9), (0.5, 33), (0.0, 0)])
def test_bulk_is_read_first_in_its_share_of_turns_under_a_steady_interactive_stream(
    share: float, bulk_firsts: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given every model queue always holding calls: the worker takes whichever it lists first
    monkeypatch.setattr(ClassFirstCycle, "bulk_share", share)
    cycle = ClassFirstCycle([MODEL_QUEUE, BULK_AHEAD_QUEUE, BULK_MODEL_QUEUE])
    firsts = []
    for _ in range(100):
        order = cycle.consume(3)
        firsts.append(order[0])
        cycle.rotate(order[0])
    # Then bulk (its ahead queue first) is read first in its share of the turns, spread out
    assert len(firsts) - firsts.count(MODEL_QUEUE) == bulk_firsts
    assert BULK_MODEL_QUEUE not in firsts
    if share == 0.1:
        assert [i for i, q in enumerate(firsts) if q != MODEL_QUEUE][:2] == [10, 21]


def test_on_a_bulk_turn_every_bulk_queue_goes_before_interactive() -> None:
    # Given a worker with a whole bulk credit (ten interactive calls taken)
    cycle = ClassFirstCycle([MODEL_QUEUE, BULK_AHEAD_QUEUE, BULK_MODEL_QUEUE])
    for _ in range(10):
        cycle.rotate(cycle.consume(3)[0])
    # Then its next read lists both bulk queues first, in their order: a bulk call in either is taken
    assert cycle.consume(3) == [BULK_AHEAD_QUEUE, BULK_MODEL_QUEUE, MODEL_QUEUE]


def test_a_worker_without_the_bulk_queues_reads_its_queues_as_kombu_does() -> None:
    cycle = ClassFirstCycle([MODEL_QUEUE, "suture.control"])
    assert cycle.consume(2) == [MODEL_QUEUE, "suture.control"]
    cycle.rotate(MODEL_QUEUE)
    assert cycle.consume(2) == ["suture.control", MODEL_QUEUE]


def held(n: int) -> object:
    return staticmethod(lambda: n)


def test_a_worker_holding_its_bulk_slots_reads_no_bulk_queue_until_one_frees(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a worker that may hold 9 bulk messages and holds 9
    monkeypatch.setattr(ClassFirstCycle, "bulk_slots", 9)
    monkeypatch.setattr(ClassFirstCycle, "bulk_held", held(9))
    cycle = ClassFirstCycle(list(ALL_QUEUES))
    # Then it asks only for interactive calls and its other queues
    order = cycle.consume(len(ALL_QUEUES))
    assert cycle.bulk_full()
    assert BULK_AHEAD_QUEUE not in order and BULK_MODEL_QUEUE not in order
    assert MODEL_QUEUE in order and "suture.control" in order
    # When one of its bulk messages ends, Then the bulk queues are read again, after interactive
    monkeypatch.setattr(ClassFirstCycle, "bulk_held", held(8))
    order = cycle.consume(len(ALL_QUEUES))
    assert not cycle.bulk_full()
    assert order.index(MODEL_QUEUE) < order.index(BULK_AHEAD_QUEUE) < order.index(BULK_MODEL_QUEUE)


def test_a_bulk_only_worker_or_one_without_a_limit_always_reads_bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ClassFirstCycle, "bulk_held", held(50))
    monkeypatch.setattr(ClassFirstCycle, "bulk_slots", 9)
    assert ClassFirstCycle([BULK_AHEAD_QUEUE, BULK_MODEL_QUEUE]).consume(2) == [
        BULK_AHEAD_QUEUE,
        BULK_MODEL_QUEUE,
    ]
    monkeypatch.setattr(ClassFirstCycle, "bulk_slots", None)
    assert BULK_MODEL_QUEUE in ClassFirstCycle(list(ALL_QUEUES)).consume(len(ALL_QUEUES))


def test_a_delayed_message_s_queue_is_its_routing_key_without_the_countdown_bits() -> None:
    # RabbitMQ's native delayed delivery routes a countdown through keys of 28 bits, then the queue's key
    from kombu.transport.native_delayed_delivery import calculate_routing_key

    assert routed_to({"routing_key": calculate_routing_key(7, BULK_AHEAD_QUEUE)}) == BULK_AHEAD_QUEUE
    assert routed_to({"routing_key": BULK_MODEL_QUEUE}) == BULK_MODEL_QUEUE
    assert routed_to(None) == ""
