"""The watchdog's clock: a daemon thread in every worker. In a control worker it sweeps, at most once
per interval cluster-wide, in that thread (finishes every job past its deadline, nudges stalled ones);
in every worker it beats, at start and every interval, so the store knows a worker is alive
(``suture status`` reads it).

Why a thread and not Celery beat: beat is one more process to deploy and keep single (two beats
double-fire); a thread in each worker needs nothing extra, and a Redis lock (``SET NX PX``
expiring after one interval) makes exactly one of them fire per interval while any worker lives.
Why not a task per tick: 2,880 rows a day in Flower's task list at the default interval, for a sweep
that needs no queue (docs/operations.md).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import redis

log = logging.getLogger(__name__)

LOCK_KEY = "suture:watchdog:lock"


class WatchdogClock:
    """Calls ``fire()`` every ``interval_s`` seconds on whichever worker wins the Redis lock (None: beats
    only)."""

    def __init__(
        self,
        client: redis.Redis,
        fire: Callable[[], None] | None,
        *,
        interval_s: float,
        owner: str,
        beat: Callable[[], None] | None = None,
        beat_s: float | None = None,
    ) -> None:
        self._client = client
        self._fire = fire
        self._beat = beat
        self._interval_s = interval_s
        # Beats may come more often than sweeps: each beat also tries the lock, which still lets one sweep
        # through per interval cluster-wide.
        self._beat_s = min(interval_s, beat_s or interval_s)
        self._owner = owner
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="suture-watchdog", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def tick(self) -> bool:
        """One tick: fire if this worker wins this interval's lock; True if it fired."""
        if self._fire is None:
            return False
        interval_ms = max(1, int(self._interval_s * 1000))
        if not self._client.set(LOCK_KEY, self._owner, nx=True, px=interval_ms):
            return False
        self._fire()
        return True

    def _run(self) -> None:
        self._beat_once()
        while not self._stop.wait(self._beat_s):
            self._beat_once()
            try:
                self.tick()
            except Exception:  # a broker or Redis hiccup must not kill the clock
                log.exception("watchdog tick failed; retrying next interval")

    def _beat_once(self) -> None:
        if self._beat is None:
            return
        try:
            self._beat()
        except Exception as exc:  # the next interval beats again
            log.warning("worker heartbeat failed: %s", type(exc).__name__)
