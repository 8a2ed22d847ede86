"""A guard around one kombu race that otherwise kills a worker when the broker drops.

On a lost connection Celery 5.7 first ``collect()``s the broker connection (which detaches its
transport) and then ``close()``s it; closing the default channel then restores unacked messages
through a transport whose client is already ``None``, and the resulting ``AttributeError`` (not a
connection error, so not ignored) escapes the consumer and ends the worker process. A worker must
survive a broker restart and reconnect by itself, so a channel close that fails this way is treated
like the connection errors kombu already ignores there: the messages stay in Redis's unacked set
and are restored by kombu's visibility-timeout sweep (and the job by suture's watchdog).
"""

from __future__ import annotations

import logging
from typing import Any

from kombu import Connection

log = logging.getLogger(__name__)
_PATCHED = False


def tolerate_detached_transport_on_close() -> None:
    """Install the guard once per process (idempotent)."""
    global _PATCHED
    if _PATCHED:
        return
    original = Connection.maybe_close_channel

    def maybe_close_channel(self: Connection, channel: Any) -> None:
        try:
            original(self, channel)
        except AttributeError:
            transport = getattr(channel, "connection", None)
            if transport is None or getattr(transport, "client", None) is not None:
                raise  # a real bug, not the detached-transport race
            log.warning("broker connection already detached while closing its channel; continuing")

    Connection.maybe_close_channel = maybe_close_channel  # type: ignore[method-assign]
    _PATCHED = True
