"""The dispatcher against a real Redis: what it sends, in which order, and what it sends again after a crash.

No worker runs: ``publish`` records the ids the dispatcher sends (the Celery publish is exercised by
tests/reliability/test_priority.py, through real worker processes), and ``ready`` is the model queue's
depth as the test sets it. Jobs are enqueued for real, so they wait where ``enqueue`` puts them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from suture.config.dispatch_settings import DispatchSettings
from suture.workers.errors import InvalidJob
from suture.workers.producer import enqueue
from suture.workers.runtime.app import configure
from suture.workers.runtime.feeder import Feeder
from suture.workers.store.job_store import JobStore, get_store
from tests.fixtures.workers import CeleryStack, wait_for

DOCUMENT = "Mitochondria make ATP. Ribosomes make proteins."


@pytest.fixture
def stack(celery_stack: Callable[..., CeleryStack]) -> CeleryStack:
    stack = celery_stack("http://127.0.0.1:9/v1")
    configure(stack.settings)
    return stack


class Queue:
    """What the dispatcher sent, and a model queue whose ready depth the test sets."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.classes: list[str | None] = []
        self.ahead: list[str] = []  # ids sent ahead (their tenant under its share)
        self.depth = 0  # ready calls in the queue read first (bulk: suture.model.bulk.ahead)
        self.common_depth = 0  # ready calls in the class's other queue (bulk: suture.model.bulk)

    def publish(self, job_id: str, job_class: str | None, tenant: str | None, ahead: bool) -> None:
        self.sent.append(job_id)
        self.classes.append(job_class)
        if ahead:
            self.ahead.append(job_id)

    def ready(self, job_class: str) -> tuple[int, int]:
        return self.depth, self.depth + self.common_depth


def feeder(store: JobStore, queue: Queue, under: Any = None, slots: int = 0, **settings: object) -> Feeder:
    chosen = DispatchSettings.model_validate({"ready_target": 100, "lease_s": 1.0} | settings)
    if under is None:
        under = lambda job_class, tenant: False  # noqa: E731
    return Feeder(store, chosen, queue.publish, queue.ready, under, lambda: slots)


def test_enqueue_stores_the_job_waiting_and_publishes_nothing(stack: CeleryStack) -> None:
    # Given the dispatcher on (the default) / When a job is enqueued / Then it waits in its class's list
    handle = enqueue("quiz", DOCUMENT, tenant="acme", priority="bulk", settings=stack.settings)
    store = get_store(stack.settings)
    assert handle.status() == "queued"
    assert store.waiting.counts() == {"interactive": {}, "bulk": {"acme": 1}}
    assert store.redis.llen("suture.model") == 0


def test_a_priority_that_names_no_class_is_refused_and_nothing_is_stored(stack: CeleryStack) -> None:
    with pytest.raises(InvalidJob, match="priority 'urgent' is not one of interactive, bulk") as refused:
        enqueue("quiz", DOCUMENT, priority="urgent", settings=stack.settings)
    assert refused.value.field == "priority"
    assert get_store(stack.settings).waiting.total() == 0


def test_interactive_first_then_tenants_in_turn_up_to_the_queue_s_room(stack: CeleryStack) -> None:
    # Given bulk jobs of two tenants, then interactive ones
    settings = stack.settings
    bulk_a = [enqueue("quiz", DOCUMENT, tenant="a", priority="bulk", settings=settings).id for _ in range(3)]
    bulk_b = [enqueue("quiz", DOCUMENT, tenant="b", priority="bulk", settings=settings).id for _ in range(2)]
    interactive = [enqueue("quiz", DOCUMENT, settings=settings).id for _ in range(2)]
    store, queue = get_store(settings), Queue()
    # When each class's model queue has room for 2 / Then the interactive jobs go, then bulk, a and b in turn
    queue.depth = 98
    assert feeder(store, queue).run_pass() == 4
    assert queue.sent == [*interactive, bulk_a[0], bulk_b[0]]
    assert queue.classes == ["interactive", "interactive", "bulk", "bulk"]
    # ...and the rest once the queue drains, each job sent once, nothing left half-dispatched
    queue.depth = 0
    assert feeder(store, queue).run_pass() == 0  # another dispatcher: the first one's lease still runs
    time.sleep(1.1)
    assert feeder(store, queue).run_pass() == 3
    assert sorted(queue.sent) == sorted(bulk_a + bulk_b + interactive)
    assert store.waiting.total() == 0


def test_a_tenant_under_its_share_goes_ahead_of_another_s_started_calls(stack: CeleryStack) -> None:
    # Given bulk jobs of tenant a (at its share of the running jobs) and of tenant b (under it)
    settings = stack.settings
    jobs_a = [enqueue("quiz", DOCUMENT, tenant="a", priority="bulk", settings=settings).id for _ in range(2)]
    jobs_b = [enqueue("quiz", DOCUMENT, tenant="b", priority="bulk", settings=settings).id for _ in range(3)]
    store, queue = get_store(settings), Queue()
    under = lambda job_class, tenant: tenant == "b"  # noqa: E731
    # When nothing waits ahead but a's started calls fill the room in the common bulk queue
    queue.depth, queue.common_depth = 0, 100
    assert feeder(store, queue, under).run_pass() == 3
    # Then only b's jobs go, ahead (a's new jobs would only queue behind a's started ones)
    assert queue.sent == jobs_b and queue.ahead == jobs_b
    # ...and once a's calls are taken, a's jobs go too, in the common queue
    queue.depth, queue.common_depth = 0, 0
    time.sleep(1.1)  # the first dispatcher's lease lapses
    assert feeder(store, queue, under).run_pass() == 2
    assert queue.sent[3:] == jobs_a and queue.ahead == jobs_b


def test_a_dispatcher_killed_between_taking_and_sending_is_made_good_by_the_next(stack: CeleryStack) -> None:
    # Given two bulk jobs taken off their list by a dispatcher that then died before sending them
    settings = stack.settings
    lost, started = (enqueue("quiz", DOCUMENT, priority="bulk", settings=settings).id for _ in range(2))
    store = get_store(settings)
    dead = feeder(store, Queue())
    assert store.waiting.hold_lease(dead.owner, 1.0) == 2
    assert store.waiting.take(dead.owner, "bulk", "", time.time()) == lost
    assert store.waiting.take(dead.owner, "bulk", "", time.time()) == started
    # ...one of which did reach a worker (a task of it opened) before the crash
    store.open_task(started, "attempt:1")
    # When the next dispatcher takes the lease once the dead one's lapses
    queue = Queue()
    heir = feeder(store, queue)
    assert heir.run_pass() == 0 and queue.sent == []  # the lease is still the dead one's
    time.sleep(1.1)
    heir.run_pass()
    # Then it sends the one that never went out (to its class's queue), not the one a worker has, and the
    # record is empty
    assert queue.sent == [lost] and queue.classes == ["bulk"]
    assert store.waiting.stranded(time.time()) == [] and store.waiting.total() == 0


def test_a_dispatcher_that_lost_its_lease_takes_nothing_more(stack: CeleryStack) -> None:
    enqueue("quiz", DOCUMENT, settings=stack.settings)
    store = get_store(stack.settings)
    assert store.waiting.take("not-the-holder", "interactive", "", time.time()) is False
    assert store.waiting.total() == 1


def test_max_in_flight_caps_the_jobs_sent_and_unfinished(stack: CeleryStack) -> None:
    # Given three jobs waiting and a cap of one job in flight
    settings = stack.settings
    jobs = [enqueue("quiz", DOCUMENT, settings=settings) for _ in range(3)]
    store, queue = get_store(settings), Queue()
    capped = feeder(store, queue, max_in_flight=1)
    # When the dispatcher runs twice / Then only the first job goes: it has not finished
    assert capped.run_pass() == 1 and capped.run_pass() == 0
    # When that job ends (here: cancelled) / Then the next one goes
    jobs[0].cancel()
    assert capped.run_pass() == 1 and queue.sent == [jobs[0].id, jobs[1].id]


def test_bulk_jobs_in_flight_grow_as_started_ones_end_up_to_what_keeps_the_live_slots_busy(
    stack: CeleryStack,
) -> None:
    # Given 20 bulk jobs waiting, workers reporting 4 bulk slots, 1.5 jobs kept in flight per slot (6)
    settings = stack.settings
    jobs = [enqueue("quiz", DOCUMENT, priority="bulk", settings=settings) for _ in range(20)]
    store, queue = get_store(settings), Queue()
    filling = feeder(store, queue, slots=4, ready_target=2, bulk_jobs_per_slot=1.5)
    # When the bulk queue is empty / Then the ready target sends 2, and the fill nothing yet
    assert filling.run_pass() == 2
    # When those jobs' calls fill the queue / Then nothing more goes while they run
    queue.common_depth = 50
    assert filling.run_pass() == 0
    # When one ends / Then it earns 1.5 new jobs: one goes now, the half waits for the next end
    jobs[0].cancel()
    assert filling.run_pass() == 1
    jobs[1].cancel()
    assert filling.run_pass() == 2 and filling.run_pass() == 0
    # When every one in flight ends / Then the fill grows to 6 in flight and no further
    for job in jobs[2:5]:
        job.cancel()
    assert filling.run_pass() == 4
    for job in jobs[5:9]:
        job.cancel()
    assert filling.run_pass() == 6 and filling.run_pass() == 0
    assert queue.sent == [job.id for job in jobs[:15]]


def test_without_the_workers_slots_bulk_jobs_go_on_the_ready_target_alone(stack: CeleryStack) -> None:
    # Given bulk jobs waiting and no worker that reported its slots (or the fill turned off)
    settings = stack.settings
    for _ in range(3):
        enqueue("quiz", DOCUMENT, priority="bulk", settings=settings)
    store, queue = get_store(settings), Queue()
    queue.common_depth = 50
    # Then none goes while the bulk queue holds its ready target
    assert feeder(store, queue, slots=0, ready_target=2).run_pass() == 0
    time.sleep(1.1)
    assert feeder(store, queue, slots=4, ready_target=2, bulk_jobs_per_slot=0).run_pass() == 0
    assert queue.sent == []


def test_a_batchs_last_few_jobs_go_at_once_beside_the_jobs_in_flight(stack: CeleryStack) -> None:
    # Given a batch's last 3 jobs waiting, the bulk queue full of started jobs' calls, and workers
    # reporting 4 bulk slots (a fill of 6 jobs in flight, of which a tail of 3)
    settings = stack.settings
    jobs = [enqueue("quiz", DOCUMENT, priority="bulk", settings=settings) for _ in range(3)]
    store, queue = get_store(settings), Queue()
    queue.common_depth = 50
    # When the tail is turned off / Then none goes before jobs in flight end (they earn the fill)
    assert feeder(store, queue, slots=4, ready_target=2, bulk_tail_share=0).run_pass() == 0
    time.sleep(1.1)  # that dispatcher's lease lapses
    # When a batch's last few go with the jobs in flight / Then all 3 go at once, not as a wave later
    tail = feeder(store, queue, slots=4, ready_target=2)
    assert tail.run_pass() == 3
    # When more wait than the tail / Then they wait for the fill, as before
    for _ in range(4):
        enqueue("quiz", DOCUMENT, priority="bulk", settings=settings)
    assert tail.run_pass() == 0
    assert queue.sent == [job.id for job in jobs]


class FullBulkQueue(Queue):
    """A model queue whose bulk side holds its ready target, the interactive side nothing; counts its
    reads."""

    reads = 0

    def ready(self, job_class: str) -> tuple[int, int]:
        self.reads += 1
        return (100, 100) if job_class == "bulk" else (0, 0)


def test_an_idle_dispatcher_sends_an_interactive_job_at_its_next_look_not_its_next_pass(
    stack: CeleryStack,
) -> None:
    # Given a running dispatcher whose passes find the bulk queue full, so it idles 30 s between them
    settings = stack.settings
    store, queue = get_store(settings), FullBulkQueue()
    enqueue("quiz", DOCUMENT, priority="bulk", settings=settings)
    dispatcher = feeder(store, queue, idle_pass_s=30.0, poll_s=0.02)
    dispatcher.start()
    try:
        wait_for(lambda: queue.reads > 0)  # it has made its first pass
        # Then, idle, it does not read the queues again (the old 20 ms polling would have read them ~25 times)
        reads = queue.reads
        time.sleep(0.5)
        assert queue.reads == reads
        # When an interactive job is enqueued
        job = enqueue("quiz", DOCUMENT, settings=settings)
        # Then it is sent well before the 30 s pass (the dispatcher looks for interactive jobs every poll_s),
        # and the bulk job still waits for room
        wait_for(lambda: job.id in queue.sent, timeout_s=15.0)
        assert queue.sent == [job.id] and queue.classes == ["interactive"]
    finally:
        dispatcher.stop()
