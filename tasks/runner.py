"""The in-process driver of the engine: calls the model for each action, slices in a thread pool.

Used by ``suture generate --inline``, tests and benchmarks; the Celery tasks drive the same step
functions across processes. ``caller`` is any ``Callable[[ModelCall], ModelReply]`` (normally the
model client's ``.call``); it must not raise for a failed call but return a reply with ``error``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from suture.config.settings import Settings
from suture.contracts.examples import AcceptedOutput
from suture.tasks.calls import ModelCall, ModelReply
from suture.tasks.engine import (
    Finish,
    JobState,
    RunFix,
    RunFull,
    apply_fix,
    apply_full,
    apply_surgical,
    next_action,
    result,
    start,
)
from suture.tasks.policy import Policy
from suture.tasks.spec import JobSpec

Caller = Callable[[ModelCall], ModelReply]
ResultCallback = Callable[[dict[str, Any]], None]
MAX_SLICE_THREADS = 16


def run_inline(
    spec: JobSpec,
    policy: Policy,
    caller: Caller,
    settings: Settings,
    *,
    accepted: Sequence[AcceptedOutput] = (),
    on_result: ResultCallback | None = None,
) -> dict[str, Any]:
    """Run one job to its end in this process and return its result; ``on_result`` fires exactly once."""
    return drive(start(spec), policy, caller, settings, accepted=accepted, on_result=on_result)


def drive(
    state: JobState,
    policy: Policy,
    caller: Caller,
    settings: Settings,
    *,
    accepted: Sequence[AcceptedOutput] = (),
    on_result: ResultCallback | None = None,
) -> dict[str, Any]:
    """Run the engine from ``state`` (a new job, or a resumed round) to its end; returns the result."""
    secrets = settings.secrets()
    while True:
        action = next_action(state, policy, accepted=accepted, secrets=secrets)
        if isinstance(action, Finish):
            break
        if isinstance(action, RunFull):
            state = apply_full(state, action, caller(action.call))
        elif isinstance(action, RunFix):
            state = apply_fix(state, action)
        else:
            state = apply_surgical(state, action, _call_all(caller, action.calls))
    final = result(state, action)
    if on_result is not None:
        on_result(final)
    return final


def _call_all(caller: Caller, calls: dict[str, ModelCall]) -> dict[str, ModelReply]:
    if len(calls) == 1:
        ((pointer, call),) = calls.items()
        return {pointer: caller(call)}
    pool = ThreadPoolExecutor(max_workers=min(MAX_SLICE_THREADS, len(calls)))
    try:
        futures = {pointer: pool.submit(caller, call) for pointer, call in calls.items()}
        replies = {pointer: future.result() for pointer, future in futures.items()}
    except BaseException:
        # Interrupted (Ctrl-C): the slices not started are dropped, the calls in flight not waited for.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return replies
