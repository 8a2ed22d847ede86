"""Bulk tasks take turns at a worker's CPU: at most a few at once outside their model calls (one beside
interactive work), interactive never waits."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from suture.workers.runtime.cpu_turns import (
    BULK_CPU_TURNS,
    BULK_CPU_TURNS_BESIDE_INTERACTIVE,
    INTERACTIVE_LINGER_S,
    Turns,
    cpu_turn,
    turn_given_back,
    use_turns,
)


@pytest.fixture(autouse=True)
def default_turns() -> Iterator[None]:
    """Each test starts from the process's default turns, none narrowed by an earlier interactive task."""
    use_turns(BULK_CPU_TURNS, BULK_CPU_TURNS_BESIDE_INTERACTIVE)
    yield
    use_turns(BULK_CPU_TURNS, BULK_CPU_TURNS_BESIDE_INTERACTIVE)


class Gauge:
    """How many threads are inside a block at once, and the most ever."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.most = 0

    def enter(self) -> None:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)

    def work(self) -> None:
        self.enter()
        time.sleep(0.01)  # long enough for the others to pile in, were they let
        self.leave()

    def leave(self) -> None:
        with self.lock:
            self.now -= 1


def run_threads(n: int, body: object) -> None:
    threads = [threading.Thread(target=body) for _ in range(n)]  # type: ignore[arg-type]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert not any(thread.is_alive() for thread in threads)


def test_bulk_tasks_work_a_few_at_a_time_but_all_wait_on_the_model_together() -> None:
    # Given 3 x BULK_CPU_TURNS bulk tasks, each working, calling the model (held until all are in
    # their call), then working again
    working, calling = Gauge(), Gauge()
    all_calling = threading.Barrier(3 * BULK_CPU_TURNS, timeout=10)

    def task() -> None:
        with cpu_turn(bulk=True):
            working.work()
            with turn_given_back():
                calling.enter()
                all_calling.wait()  # would time out if a call kept its turn
                calling.leave()
            working.work()

    # When they run at once
    run_threads(3 * BULK_CPU_TURNS, task)
    # Then no more than BULK_CPU_TURNS worked at once, while every one of them waited on the model together
    assert working.most == BULK_CPU_TURNS
    assert calling.most == 3 * BULK_CPU_TURNS


def test_an_interactive_task_never_waits_for_a_turn() -> None:
    # Given every turn held by bulk tasks that are working
    release = threading.Event()
    holding = threading.Barrier(BULK_CPU_TURNS + 1, timeout=10)

    def bulk() -> None:
        with cpu_turn(bulk=True):
            holding.wait()
            release.wait(10)

    threads = [threading.Thread(target=bulk) for _ in range(BULK_CPU_TURNS)]
    for thread in threads:
        thread.start()
    holding.wait()
    # When an interactive task runs (and calls the model), Then it goes through at once
    ran = []
    with cpu_turn(bulk=False), turn_given_back():
        ran.append(True)
    assert ran == [True]
    release.set()
    for thread in threads:
        thread.join(timeout=10)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now_s = 100.0

    def __call__(self) -> float:
        return self.now_s


def test_bulk_gets_fewer_turns_while_an_interactive_task_runs_and_a_while_after() -> None:
    # Given 4 turns, 1 beside interactive work, lingering 1 s after it
    clock = Clock()
    turns = Turns(4, 1, linger_s=1.0, clock=clock)
    assert turns.limit() == 4
    # When an interactive task runs, Then bulk has 1 turn
    with turns.interactive():
        assert turns.limit() == 1
        clock.now_s += 30  # however long it runs
        assert turns.limit() == 1
    # And still 1 just after it ended (the same job's next task is on its way), 4 once the linger is over
    clock.now_s += 0.9
    assert turns.limit() == 1
    clock.now_s += 0.2
    assert turns.limit() == 4


def test_bulk_tasks_work_one_at_a_time_beside_an_interactive_task_then_widen() -> None:
    # Given an interactive task running in the process while 8 bulk tasks want to work
    working = Gauge()

    def bulk() -> None:
        with cpu_turn(bulk=True):
            working.work()

    with cpu_turn(bulk=False):
        # When the bulk tasks run beside it
        run_threads(8, bulk)
    # Then only one worked at a time
    assert working.most == BULK_CPU_TURNS_BESIDE_INTERACTIVE == 1
    # And once the interactive task is gone (and its linger over), they work BULK_CPU_TURNS at a time again
    time.sleep(INTERACTIVE_LINGER_S + 0.1)  # within the linger, the 8 would still pass one at a time
    working = Gauge()
    run_threads(8, bulk)
    assert working.most == BULK_CPU_TURNS


def test_a_bulk_task_waiting_on_the_linger_starts_when_it_ends() -> None:
    # Given bulk's one narrow turn held, and an interactive task that has just ended
    turns = Turns(2, 1, linger_s=3.0)
    turns.acquire()
    with turns.interactive():
        pass
    # When a second bulk task asks for a turn, Then it gets one once the linger ends, no release needed
    started = threading.Event()

    def second() -> None:
        turns.acquire()
        started.set()

    thread = threading.Thread(target=second)
    thread.start()
    assert not started.wait(0.2)
    assert started.wait(10)
    thread.join(timeout=5)
    turns.release()
    turns.release()
