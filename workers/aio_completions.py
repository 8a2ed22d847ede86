"""One subscription per event loop to job deliveries, shared by every ``await handle.result()`` in it.

The asyncio twin of ``suture.workers.store.completions``: a listener task pattern-subscribes to the
store's ``done`` channels and sets the events of the waiters of the job a notice names; a waiter
reads the result when woken and at least every ``RECHECK_S``. A lost connection is re-made, and
every waiter re-reads once it is back, so a notice published in the gap is not missed for long.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import redis.asyncio as aioredis
import redis.exceptions

log = logging.getLogger(__name__)

RECHECK_S = 5.0
RECONNECT_S = (0.2, 5.0)


class AsyncCompletions:
    """Wakes a job's waiters in this event loop when its delivery notice is published."""

    def __init__(self, client: aioredis.Redis, prefix: str) -> None:
        self._client = client
        self._pattern = f"{prefix}:done:*"
        self._waiters: dict[str, set[asyncio.Event]] = {}
        self._subscribed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def wait(self, job_id: str, read: Callable[[], Awaitable[Any]], timeout_s: float | None) -> Any:
        """``await read()`` until it is not None, or ``timeout_s`` passes (then None)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        if self._task is None:
            self._task = asyncio.create_task(self._listen(), name="suture-completions")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._subscribed.wait(), RECHECK_S)
        event = asyncio.Event()
        self._waiters.setdefault(job_id, set()).add(event)
        try:
            while True:
                event.clear()
                value = await read()
                if value is not None:
                    return value
                remaining = RECHECK_S if deadline is None else deadline - time.monotonic()
                if remaining <= 0:
                    return None
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), min(remaining, RECHECK_S))
        finally:
            waiting = self._waiters.get(job_id)
            if waiting is not None:
                waiting.discard(event)
                if not waiting:
                    del self._waiters[job_id]

    def waiting(self) -> int:
        """How many waiters are registered now."""
        return sum(len(events) for events in self._waiters.values())

    async def stop(self) -> None:
        """Cancel the listener (the loop is shutting down)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _listen(self) -> None:
        pause_s = RECONNECT_S[0]
        while True:
            try:
                await self._serve()
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
                log.info("completions: subscription lost (%s); reconnecting", type(exc).__name__)
            self._subscribed.clear()
            self._wake_all()
            await asyncio.sleep(pause_s)
            pause_s = min(pause_s * 2, RECONNECT_S[1])

    async def _serve(self) -> None:
        pubsub = self._client.pubsub()
        try:
            await pubsub.psubscribe(self._pattern)
            while True:
                message = await pubsub.get_message(timeout=1.0)
                if message is None:
                    continue
                if message["type"] == "psubscribe":
                    self._subscribed.set()
                    self._wake_all()  # anything published while (re)connecting: everyone re-reads
                elif message["type"] == "pmessage":
                    for event in self._waiters.get(str(message["channel"]).rsplit(":", 1)[-1], ()):
                        event.set()
        finally:
            await pubsub.aclose()

    def _wake_all(self) -> None:
        for waiting in self._waiters.values():
            for event in waiting:
                event.set()
