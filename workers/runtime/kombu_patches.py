"""Fixes to kombu's Redis transport: a race that kills a worker when the broker drops, a client per command,
and a BRPOP that waits a second while a worker keeps its last slots for interactive calls.

1. The race.

On a lost connection Celery 5.7 ``collect()``s the broker connection, which detaches its
transport (``transport.client = None``), and afterwards still closes its channel and acks messages
of tasks that finish meanwhile. Both reach ``Channel._connparams``, which then raises
``AttributeError`` — not a connection error, so neither ``ignore_errors`` nor ``ack_log_error``
catches it, and it ends the worker process. A worker must survive a broker restart and reconnect by
itself, so a detached transport is reported as what it is, a closed connection: the ack is logged as
failed, the message stays in Redis's unacked set and is redelivered after the visibility timeout
(every suture task is idempotent), and closing the channel is ignored like any connection error.

2. A client per command. ``Channel.conn_or_acquire`` builds a new ``redis.Redis`` for every
publish, ack and event: 0.1-0.2 ms of CPU each (redis-py copies its table of response
callbacks per client), 8-9 % of a busy worker's CPU in ``bench/bench_celery.py``'s profile. A ``redis.Redis``
over a connection pool is
thread-safe and holds no connection of its own, so the channel keeps one per pool and reuses it;
a new pool (after a reconnect) gets a new client, and the commands and connections are unchanged.

3. A held-back BRPOP. A worker holding all the bulk messages it may (``queue_order``) lists only its
other queues in its BRPOP, which kombu sends with a one-second timeout: a bulk slot that frees
meanwhile would stay idle until it expires. Such a BRPOP is sent with ``HELD_BACK_BRPOP_S`` instead.

4. A demoted primary. After a failover at a fixed address (a managed Redis's endpoint), connections still
open to the old primary, now a replica, answer ``READONLY`` (and a BRPOP blocked there ``UNBLOCKED ...
master -> replica``): ``ResponseError``s that ended the worker, with Sentinel too (redis-py's sentinel
connection turns only ``READONLY`` into a reconnect). Both are connection errors here, so Celery
reconnects (to the new primary the address or the sentinels name) and the worker lives on.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import redis
from kombu.transport import redis as kombu_redis

from suture.workers.runtime.queue_order import HELD_BACK_BRPOP_S

_PATCHED = False
# Replies of a primary on its way out: demoted under a blocked BRPOP, or without the replicas
# ``min-replicas-to-write`` asks for (docs/operations.md).
DEMOTED_REPLIES = ("UNBLOCKED", "NOREPLICAS")


def patch_redis_transport() -> None:
    """Install the fixes once per process (idempotent)."""
    global _PATCHED
    if _PATCHED:
        return
    original = kombu_redis.Channel._connparams

    def _connparams(self: Any, asynchronous: bool = False) -> Any:
        if getattr(self.connection, "client", None) is None:
            raise redis.exceptions.ConnectionError("broker connection already closed (transport detached)")
        return original(self, asynchronous=asynchronous)

    kombu_redis.Channel._connparams = _connparams  # type: ignore[method-assign]
    # 4. A demoted primary: READONLY, and UNBLOCKED for a BRPOP it was blocked in, are connection errors.
    errors = kombu_redis.Transport.connection_errors
    if redis.exceptions.ReadOnlyError not in errors:
        kombu_redis.Transport.connection_errors = (*errors, redis.exceptions.ReadOnlyError)
    original_brpop_read = kombu_redis.Channel._brpop_read

    def _brpop_read(self: Any, **options: Any) -> Any:
        try:
            return original_brpop_read(self, **options)
        except redis.exceptions.ResponseError as exc:
            if not str(exc).startswith(DEMOTED_REPLIES):
                raise
            self.client.connection.disconnect()  # the next BRPOP connects again (to the new primary)
            raise redis.exceptions.ConnectionError(f"broker demoted to a replica: {exc}") from None

    kombu_redis.Channel._brpop_read = _brpop_read  # type: ignore[method-assign]
    kombu_redis.Channel.conn_or_acquire = _conn_or_acquire  # type: ignore[method-assign]
    original_brpop_start = kombu_redis.Channel._brpop_start

    def _brpop_start(self: Any, timeout: Any = None) -> Any:
        held_back = getattr(self._queue_cycle, "bulk_full", None)
        if timeout is None and held_back is not None and held_back():
            timeout = HELD_BACK_BRPOP_S
        return original_brpop_start(self, timeout)

    kombu_redis.Channel._brpop_start = _brpop_start  # type: ignore[method-assign]
    _PATCHED = True


@contextmanager
def _conn_or_acquire(self: Any, client: Any = None) -> Iterator[Any]:
    """kombu's ``Channel.conn_or_acquire``, reusing one synchronous client per connection pool."""
    if client:
        yield client
        return
    pool = self.pool  # as before: a detached transport raises here (see 1.)
    cached = self.__dict__.get("_suture_client")
    if cached is None or cached.connection_pool is not pool:
        cached = self.__dict__["_suture_client"] = self._create_client()
    yield cached
