"""An accepted job survives a failover: the store waits for a replica's acknowledgement before answering.

Redis replicates asynchronously: a primary that dies right after answering a write may take it with it, and
Sentinel then promotes a replica that never saw it (the producer holds a job id no Redis knows). ``WAIT n
ms`` after the write, on the same connection, returns once ``n`` replicas have it (or at the timeout, with
how many had). The store does so for a new job only (``JobStore.create``), and only while the primary has
replicas: a lone Redis has nothing to wait for, and ``WAIT 1`` there would always run to its timeout.

What it guarantees, and what not (docs/operations.md, "Redis"): a job whose enqueue returned was on at least
``store.wait_replicas`` replicas when it did. When fewer answer within ``store.wait_timeout_ms`` (the
primary being demoted, its replica gone), enqueue raises ``StoreUnavailable``: the job may exist or not, and
a retry with the same idempotency key finds it or creates it, on whichever primary is there. It is not a
consensus write: Sentinel may still
promote a replica that lagged (the one that acknowledged is usually the one promoted, and with one replica
it is the only one), and the workers' later writes are not waited for (a step lost in a failover is redone,
the watchdog re-sends a job's step whose message was lost).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import redis

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
    """The number of replicas to ``WAIT`` for after a write: ``wait_replicas`` capped by those connected.

    A primary that has lost its replicas for a moment is still waited for (``REPLICA_GRACE_S``): in a
    failover the primary being demoted sees its replica leave (promoted) and would otherwise take writes
    alone, just before it is made a replica and they are thrown away. There ``WAIT`` times out and enqueue
    raises instead. Past the grace, a primary without replicas is taken as a lone Redis (not waited for).
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
            replicas = _connected_replicas(self._r)
            with self._lock:
                self._known = (now, replicas)
                if replicas:
                    self._replicas_seen_at = now
        if not replicas and now - self._replicas_seen_at < REPLICA_GRACE_S:
            replicas = 1  # replicas a moment ago: a failover, most likely (see the class docstring)
        return min(self.durability.wait_replicas, replicas)

    def shortfall(self, job_id: str, wanted: int, acked: int) -> str | None:
        """Why a new job cannot be called accepted (fewer than ``wanted`` replicas have it), or None."""
        if acked >= wanted:
            return None
        return (
            f"job {job_id} not acknowledged by a replica: {acked} of {wanted} within "
            f"{self.durability.wait_timeout_ms} ms (a failover under way?); retry with the same idempotency "
            "key"
        )


def _connected_replicas(client: redis.Redis) -> int:
    try:
        info = client.info("replication")
    except redis.exceptions.ResponseError:  # INFO refused (a managed Redis's ACL): never wait
        return 0
    return int(info.get("connected_slaves", 0)) if info.get("role") == "master" else 0
