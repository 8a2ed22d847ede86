"""The watchdog's clock: a daemon thread in every worker that, at most once per interval cluster-wide,
sends ``suture.watchdog`` (which finishes every job past its deadline).

Why a thread and not Celery beat: beat is one more process to deploy and keep single (two beats
double-fire); a thread in each worker needs nothing extra, and a Redis lock (``SET NX PX``
expiring after one interval) makes exactly one of them fire per interval while any worker lives.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import redis

log = logging.getLogger(__name__)

LOCK_KEY = "suture:watchdog:lock"


class WatchdogClock:
    """Calls ``fire()`` every ``interval_s`` seconds on whichever worker wins the Redis lock."""

    def __init__(
        self, client: redis.Redis, fire: Callable[[], None], *, interval_s: float, owner: str
    ) -> None:
        self._client = client
        self._fire = fire
        self._interval_s = interval_s
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
        interval_ms = max(1, int(self._interval_s * 1000))
        if not self._client.set(LOCK_KEY, self._owner, nx=True, px=interval_ms):
            return False
        self._fire()
        return True

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                self.tick()
            except Exception:  # a broker or Redis hiccup must not kill the clock
                log.exception("watchdog tick failed; retrying next interval")
