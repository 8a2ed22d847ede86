"""Bulk tasks take turns at a worker's CPU: at most a few at once outside their model calls, interactive never waits."""

from __future__ import annotations

import threading
import time

from suture.workers.runtime.cpu_turns import BULK_CPU_TURNS, cpu_turn, turn_given_back


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
