"""Bulk tasks take turns at a worker's CPU, so an interactive task beside them keeps its speed.

A worker's tasks are threads of one process, sharing one interpreter lock. When a hundred bulk tasks
validate, store and publish at once, an interactive task among them gets a hundredth of the CPU, and its
steps between model calls take ten times as long (measured: a 0.15 s repair round took over a second
behind 3,000 bulk jobs on the simulator). So a bulk task runs its own work holding one of
``worker.bulk_cpu_turns`` turns (set at worker start, ``use_turns``) and gives its turn back for the model call, which is I/O and needs none:
any number of bulk calls still wait on the model at once, while at most that many bulk tasks compete
for the CPU with interactive ones, which never wait for a turn. The CPU is no less used: a handful of
threads keeps one interpreter lock busy.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

BULK_CPU_TURNS = 4  # the default of ``worker.bulk_cpu_turns``

_turns = threading.BoundedSemaphore(BULK_CPU_TURNS)
_held = threading.local()


def use_turns(turns: int) -> None:
    """Set how many bulk tasks may work at once in this process; called once, before any task runs."""
    global _turns
    _turns = threading.BoundedSemaphore(turns)


@contextmanager
def cpu_turn(bulk: bool) -> Iterator[None]:
    """Run a task's body: a bulk one holding a turn (but during its model calls), any other at once."""
    if not bulk:
        yield
        return
    turns = _turns  # the one taken from is the one given back to, should ``use_turns`` run meanwhile
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
