"""Bulk tasks take turns at a worker's CPU, so an interactive task beside them keeps its speed.

A worker's tasks are threads of one process, sharing one interpreter lock. When a hundred bulk tasks
validate, store and publish at once, an interactive task among them gets a hundredth of the CPU, and its
steps between model calls take ten times as long (measured: a 0.15 s repair round took over a second
behind 3,000 bulk jobs on the simulator). So a bulk task runs its own work holding one of
``worker.bulk_cpu_turns`` turns (set at worker start, ``use_turns``) and gives its turn back for the model
call, which is I/O and needs none:
any number of bulk calls still wait on the model at once, while at most that many bulk tasks compete
for the CPU with interactive ones, which never wait for a turn. The CPU is no less used: a handful of
threads keeps one interpreter lock busy.

While an interactive task runs in the process, and for ``INTERACTIVE_LINGER_S`` after the last one
ends (the same job's next task is usually a few milliseconds away), bulk tasks get fewer turns:
``worker.bulk_cpu_turns_beside_interactive`` (1). Measured on the simulator, a batch's first wave held
an interactive job to 1.34 x its time alone with 4 turns and 1.16 x with 1; but 1 turn all the time
cost a tenth of bulk throughput (a turn holder waiting on Redis leaves the CPU idle), which a batch
running alone no longer pays.

    Turns          one per worker process: the counts, guarded by one condition
      cpu_turn     a task's body (bulk: holding a turn; interactive: counted, never waiting)
      turn_given_back   around a bulk task's model call
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

BULK_CPU_TURNS = 4  # the default of ``worker.bulk_cpu_turns``
BULK_CPU_TURNS_BESIDE_INTERACTIVE = 1  # the default of ``worker.bulk_cpu_turns_beside_interactive``
INTERACTIVE_LINGER_S = 1.0


class Turns:
    """How many bulk tasks may work at once: ``wide`` alone, ``narrow`` beside interactive work."""

    def __init__(
        self,
        wide: int,
        narrow: int | None = None,
        *,
        linger_s: float = INTERACTIVE_LINGER_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.wide = wide
        self.narrow = min(wide, narrow if narrow is not None else wide)
        self._linger_s = linger_s
        self._clock = clock
        self._ready = threading.Condition()
        self._held = 0
        self._interactive = 0
        self._narrow_until = float("-inf")

    def limit(self) -> int:
        """The turns bulk tasks may hold now."""
        with self._ready:
            return self._limit(self._clock())

    def acquire(self) -> None:
        with self._ready:
            while True:
                now = self._clock()
                if self._held < self._limit(now):
                    self._held += 1
                    return
                # While only the linger narrows, wake when it ends: nobody notifies then.
                lingering = not self._interactive and now < self._narrow_until
                self._ready.wait(self._narrow_until - now if lingering else None)

    def release(self) -> None:
        with self._ready:
            self._held -= 1
            self._ready.notify()

    @contextmanager
    def interactive(self) -> Iterator[None]:
        """Count an interactive task's body: bulk gets the narrow turns until it ends, and a while after."""
        with self._ready:
            self._interactive += 1
        try:
            yield
        finally:
            with self._ready:
                self._interactive -= 1
                if not self._interactive:
                    self._narrow_until = self._clock() + self._linger_s
                    self._ready.notify_all()  # waiters now wait for the linger's end, not for a notify

    def _limit(self, now: float) -> int:
        narrowed = self._interactive or now < self._narrow_until
        return self.narrow if narrowed else self.wide


_turns = Turns(BULK_CPU_TURNS, BULK_CPU_TURNS_BESIDE_INTERACTIVE)
_held = threading.local()


def use_turns(turns: int, beside_interactive: int | None = None) -> None:
    """Set how many bulk tasks may work at once in this process; called once, before any task runs."""
    global _turns
    _turns = Turns(turns, beside_interactive)


@contextmanager
def cpu_turn(bulk: bool) -> Iterator[None]:
    """Run a task's body: a bulk one holding a turn (but during its model calls), any other at once."""
    turns = _turns  # the one taken from is the one given back to, should ``use_turns`` run meanwhile
    if not bulk:
        with turns.interactive():
            yield
        return
    turns.acquire()
    _held.turns = turns
    try:
        yield
    finally:
        if getattr(_held, "turns", None) is not None:
            _held.turns = None
            turns.release()


@contextmanager
def turn_given_back() -> Iterator[None]:
    """Around a model call: a bulk task's turn goes to another bulk task until the call returns."""
    turns = getattr(_held, "turns", None)
    if turns is None:
        yield
        return
    _held.turns = None
    turns.release()
    try:
        yield
    finally:
        turns.acquire()
        _held.turns = turns
