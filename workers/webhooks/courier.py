"""The deliveries in flight in one worker process: an event loop of its own, so none holds a task thread.

``suture.callback`` hands its callback to ``courier()`` and returns at once; the courier's loop
(one daemon thread per process, started on first use and again after a fork) runs up to
``webhook.concurrency`` deliveries at a time, each bounded by ``webhook.deadline_s``, and waits out
a failed delivery's backoff itself before the next attempt (so the gaps are the documented ones,
not the watchdog's sweep interval). Whatever
happens to the process, the outbox still holds every callback not marked sent, and the watchdog
publishes it again once its lease ran out: delivery stays at least once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from concurrent.futures import Future

from suture.workers.errors import StoreUnavailable
from suture.workers.store.outbox import Pending
from suture.workers.webhooks.sender import Sender

log = logging.getLogger(__name__)


class Courier:
    """Runs ``Sender.send`` for submitted callbacks on a background event loop."""

    def __init__(self, sender: Sender, concurrency: int) -> None:
        self._sender = sender
        self._concurrency = concurrency
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._slots: asyncio.Semaphore | None = None
        self._pid = 0

    def submit(self, item: Pending) -> Future[str]:
        """Start delivering ``item`` in the background; the future says how it went."""
        loop = self._running_loop()
        return asyncio.run_coroutine_threadsafe(self._send(item), loop)

    async def _send(self, item: Pending) -> str:
        """Deliver ``item``, then each retry when its backoff is over (waiting holds no slot)."""
        assert self._slots is not None
        while True:
            async with self._slots:
                try:
                    outcome = await self._sender.send(item)
                except StoreUnavailable as exc:  # Redis away, or a failover: the watchdog publishes it again
                    log.warning("job %s: callback %s waits for the store: %s", item.job_id, item.tag, exc)
                    return "error"
                except Exception:  # the lease runs out and the watchdog publishes it again
                    log.exception("job %s: callback %s: delivery error", item.job_id, item.tag)
                    return "error"
            if outcome.name != "retry":
                return outcome.name
            # The retry is due in the outbox too: if this process dies while waiting, the watchdog sends it.
            await asyncio.sleep(outcome.retry_in_s)

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._pid != os.getpid():
                self._loop = asyncio.new_event_loop()
                self._slots = asyncio.Semaphore(self._concurrency)
                self._pid = os.getpid()
                thread = threading.Thread(target=self._loop.run_forever, name="suture-courier", daemon=True)
                thread.start()
            return self._loop
