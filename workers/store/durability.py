"""An accepted job, and every write an outside effect follows, survives a failover: the store waits for a
replica's acknowledgement first.

Redis replicates asynchronously: a primary that dies right after answering a write may take it with it, and
Sentinel then promotes a replica that never saw it. In a graceful failover (``SENTINEL FAILOVER``) the old
primary even keeps answering writes for about ten seconds after its replica was promoted (until the sentinels
demote it), and its resync throws them all away. ``WAIT n ms`` after the write, on the same connection,
returns once ``n`` replicas have it (or at the timeout, with how many had). The store does so (``ReplicaAck``)
for a new job (``JobStore.create``) and for every write an outside effect follows: an attempt's saved result
and a slice reply (the next model call builds on them), a job's result (the producer reads it), the callback
owed and its claim before the POST (a webhook), a task callback's lease, a reviewer's result. Fewer replicas
than asked within ``store.wait_timeout_ms`` is a failed write: ``StoreUnavailable`` (the step re-runs, an
enqueue is retried with its key), until the old primary's connections end at its demotion and the re-run
reaches the new one (the sentinels' choice, or a managed Redis's moved endpoint). The old primary has no
replica once its replica was promoted, so none of its writes is acknowledged:
no webhook goes out, and no result is taken as stored, on its word.

Only a primary that had replicas is waited for: a lone Redis has nothing to wait for, and ``WAIT 1`` there
would always run to its timeout. Replicas seen within ``REPLICA_GRACE_S`` are still waited for after they
are gone: that is a failover (``ReplicaAck``). Writes then fail until a replica is back or the grace ran out.

What it guarantees, and what not (docs/operations.md, "Redis"): a job whose enqueue returned, and a result,
webhook or saved attempt that went out, was on at least ``store.wait_replicas`` replicas. It is not a
consensus write: Sentinel may still promote a replica that lagged (the one that acknowledged is usually the
one promoted, and with one replica it is the only one). Reads are not waited for: a producer polling a
job's result during the failover window may read one from the old primary that is then thrown away (the job
ends again, maybe with another result; its webhook carries only the surviving one). Writes no outside effect
follows (a task opened, progress, flags) are not waited for: a step lost with them is redone.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import redis

from suture.workers.errors import NotReplicated
from suture.workers.store.errors import guarded

# How long the primary's replica count is trusted before it is asked again.
REPLICAS_TTL_S = 5.0
# After replicas were last seen, a primary without any is still waited for this long (a failover).
REPLICA_GRACE_S = 30.0


@dataclass(frozen=True)
class Durability:
    """How many replicas a new job waits for (0: none), and for how long at most."""

    wait_replicas: int = 0
    wait_timeout_ms: int = 1000


class ReplicaAck:
    """The number of replicas to ``WAIT`` for after a write (``wanted``), and writes that wait (``call``).

    ``wanted``: ``wait_replicas`` capped by those connected. A primary that has lost its replicas for a
    moment is still waited for (``REPLICA_GRACE_S``): in a failover the primary being demoted sees its
    replica leave (promoted) and would otherwise take writes alone, just before it is made a replica and
    they are thrown away. There ``WAIT`` times out and the write fails instead. Past the grace, a primary
    without replicas is taken as a lone Redis (not waited for). The grace is the process's, not a server's:
    in a failover the replica count may be read from the new primary (no replica yet) while a pooled
    connection still writes to the old one (measured: an accepted job lost when the grace was keyed by the
    primary's replication id). So a newly promoted primary is waited for too until a replica joins it (the
    old primary, once the sentinels reconfigure it) or the grace runs out.
    """

    def __init__(self, client: redis.Redis, durability: Durability) -> None:
        self._r = client
        self.durability = durability
        self._lock = threading.Lock()
        self._known: tuple[float, int] = (float("-inf"), 0)
        self._replicas_seen_at = float("-inf")

    def wanted(self) -> int:
        """Replicas to wait for now (0: do not wait); the primary's count is re-read every few seconds."""
        if self.durability.wait_replicas <= 0:
            return 0
        now = time.monotonic()
        with self._lock:
            at, replicas = self._known
        if now - at > REPLICAS_TTL_S:
            connected = _connected_replicas(self._r)
            with self._lock:
                if connected:
                    self._replicas_seen_at = now
                # Replicas a moment ago: a failover, most likely (the docstring). On any primary: the INFO
                # read and the write may reach different ones in a failover (pooled connections).
                late = now - self._replicas_seen_at < REPLICA_GRACE_S
                replicas = 1 if not connected and late else connected
                self._known = (now, replicas)
        return min(self.durability.wait_replicas, replicas)

    def call(self, script: Any, keys: list[str], args: list[Any], what: str) -> Any:
        """Run a write script; with replicas to wait for, ``WAIT`` on the same connection (a pipeline) and
        raise StoreUnavailable when fewer acknowledge it (the write may be on its way out with the
        primary)."""
        wanted = guarded(self.wanted)
        if not wanted:
            return guarded(lambda: script(keys=keys, args=args))
        pipe = self._r.pipeline(transaction=False)
        script(keys=keys, args=args, client=pipe)
        pipe.wait(wanted, self.durability.wait_timeout_ms)
        reply, acked = guarded(pipe.execute)
        self.check(what, wanted, int(acked))
        return reply

    def check(self, what: str, wanted: int, acked: int) -> None:
        """Raise NotReplicated (a StoreUnavailable) if ``acked`` falls short of ``wanted`` (the replica count
        is then read
        again).

        The pool's connections are not dropped here: redis-py's pool lets another thread take a connection
        while it is being closed (measured: an ``AttributeError`` in a task). The old primary's connections
        end when it is demoted (``READONLY``, ``UNBLOCKED``: connection errors) and the re-run reaches the
        new one; until then each of its writes fails here.
        """
        if acked >= wanted:
            return
        with self._lock:
            self._known = (float("-inf"), 0)  # ask the primary (maybe another one) again
        raise NotReplicated(
            f"{what} not acknowledged by a replica: {acked} of {wanted} within "
            f"{self.durability.wait_timeout_ms} ms (a failover under way?)"
        )


def _connected_replicas(client: redis.Redis) -> int:
    try:
        info = client.info("replication")
    except redis.exceptions.ResponseError:  # INFO refused (a managed Redis's ACL): never wait
        return 0
    return int(info.get("connected_slaves", 0)) if info.get("role") == "master" else 0
