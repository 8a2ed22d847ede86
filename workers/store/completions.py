"""One subscription per process to job deliveries, shared by every thread that waits for a result.

A waiter used to hold a pub/sub connection of its own, so a web process with a few hundred requests
waiting on quizzes ran out of Redis connections. Here one listener thread pattern-subscribes to the
store's ``done`` channels and wakes the waiters of the job a notice names; a waiter itself only
reads the result (one pooled round trip) when woken, and at least every ``recheck_s`` besides (a
resumed job publishes again on the same channel; a notice lost to a reconnect costs that much at
most). When the listener loses its connection it reconnects and wakes every waiter, which re-reads.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import redis

log = logging.getLogger(__name__)

RECHECK_S = 5.0
RECONNECT_S = (0.2, 5.0)  # first and longest pause between reconnects


class Completions:
    """Wakes the waiters of a job when its delivery notice is published on ``{prefix}:done:<id>``."""

    def __init__(self, client: redis.Redis, prefix: str, recheck_s: float = RECHECK_S) -> None:
        self._client = client
        self._pattern = f"{prefix}:done:*"
        self._recheck_s = recheck_s
        self._lock = threading.Lock()
        self._waiters: dict[str, set[threading.Event]] = {}
        self._subscribed = threading.Event()
        self._pid = 0  # the process the listener runs in: a forked child starts its own

    def wait(self, job_id: str, read: Callable[[], Any], timeout_s: float | None) -> Any:
        """``read()`` until it returns something other than None, or ``timeout_s`` passes (None)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        event = threading.Event()
        self._ensure_listening()
        with self._lock:
            self._waiters.setdefault(job_id, set()).add(event)
        try:
            while True:
                # Registered before reading: a notice published between the two still wakes us.
                event.clear()
                value = read()
                if value is not None:
                    return value
                remaining = self._recheck_s if deadline is None else deadline - time.monotonic()
                if remaining <= 0:
                    return None
                event.wait(min(remaining, self._recheck_s))
        finally:
            with self._lock:
                waiting = self._waiters.get(job_id)
                if waiting is not None:
                    waiting.discard(event)
                    if not waiting:
                        del self._waiters[job_id]

    def waiting(self) -> int:
        """How many waiters are registered now (for tests and metrics)."""
        with self._lock:
            return sum(len(events) for events in self._waiters.values())

    def _ensure_listening(self) -> None:
        with self._lock:
            if self._pid != os.getpid():
                self._pid = os.getpid()
                self._subscribed.clear()
                self._waiters.clear()
                threading.Thread(target=self._listen, name="suture-completions", daemon=True).start()
        # The first subscription must be in place before anyone reads, or a delivery in between would
        # wait for the recheck; later reconnects wake everyone instead.
        self._subscribed.wait(timeout=self._recheck_s)

    def _listen(self) -> None:
        pause_s = RECONNECT_S[0]
        while True:
            try:
                self._serve()
            except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
                log.info("completions: subscription lost (%s); reconnecting", type(exc).__name__)
            except Exception:
                log.warning("completions: listener failed; reconnecting", exc_info=True)
            self._wake_all()
            time.sleep(pause_s)
            pause_s = min(pause_s * 2, RECONNECT_S[1])

    def _serve(self) -> None:
        pubsub = self._client.pubsub()
        try:
            pubsub.psubscribe(self._pattern)
            self._confirmed(pubsub)
            self._subscribed.set()
            self._wake_all()  # anything published while we were (re)connecting: everyone re-reads
            while True:
                message = pubsub.get_message(timeout=1.0)
                if message is not None and message.get("type") == "pmessage":
                    self._wake(str(message["channel"]).rsplit(":", 1)[-1])
        finally:
            pubsub.close()

    @staticmethod
    def _confirmed(pubsub: Any, tries: int = 10) -> None:
        """Wait for Redis to confirm the subscription (from then on no notice is missed)."""
        for _ in range(tries):
            message = pubsub.get_message(timeout=1.0)
            if message is not None and message.get("type") == "psubscribe":
                return
        raise redis.TimeoutError("no confirmation of the completions subscription")

    def _wake(self, job_id: str) -> None:
        with self._lock:
            events = list(self._waiters.get(job_id, ()))
        for event in events:
            event.set()

    def _wake_all(self) -> None:
        with self._lock:
            events = [event for waiting in self._waiters.values() for event in waiting]
        for event in events:
            event.set()
