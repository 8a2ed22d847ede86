"""A guard around one kombu race that otherwise kills a worker when the broker drops.

On a lost connection Celery 5.7 ``collect()``s the broker connection, which detaches its
transport (``transport.client = None``), and afterwards still closes its channel and acks messages
of tasks that finish meanwhile. Both reach ``Channel._connparams``, which then raises
``AttributeError`` — not a connection error, so neither ``ignore_errors`` nor ``ack_log_error``
catches it, and it ends the worker process. A worker must survive a broker restart and reconnect by
itself, so a detached transport is reported as what it is, a closed connection: the ack is logged as
failed, the message stays in Redis's unacked set and is redelivered after the visibility timeout
(every suture task is idempotent), and closing the channel is ignored like any connection error.
"""

from __future__ import annotations

from typing import Any

import redis
from kombu.transport import redis as kombu_redis

_PATCHED = False


def tolerate_detached_transport() -> None:
    """Install the guard once per process (idempotent)."""
    global _PATCHED
    if _PATCHED:
        return
    original = kombu_redis.Channel._connparams

    def _connparams(self: Any, asynchronous: bool = False) -> Any:
        if getattr(self.connection, "client", None) is None:
            raise redis.exceptions.ConnectionError("broker connection already closed (transport detached)")
        return original(self, asynchronous=asynchronous)

    kombu_redis.Channel._connparams = _connparams  # type: ignore[method-assign]
    _PATCHED = True
