"""The job store's Redis connections: one bounded pool per process and URL, sized to its concurrency.

Without a socket timeout a half-open connection (a Redis host gone without a reset) blocks a worker
thread for good: Celery's threads pool enforces no time limit to end it; keep-alive finds such a peer
on idle pooled connections too. The pool is a blocking one: a caller finding every connection busy
waits ``Pool.wait_s`` for one (then it is an outage, retried like any other), never "Too many
connections". A worker raises the pool to its concurrency at start-up (``size_pool_for``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import redis

# Connections beyond one per concurrent task: the worker's clock (watchdog, heartbeat) and the
# completions subscription.
SPARE_CONNECTIONS = 8

_least = {"size": 1}


@dataclass(frozen=True)
class Pool:
    """How a process's job-store connection pool is sized and how long a command may take."""

    size: int
    wait_s: float  # for a free connection of a full pool
    timeout_s: float  # for a command's reply


def size_pool_for(concurrency: int) -> None:
    """Make this process's store pool hold one connection per concurrent task and a few spare."""
    _least["size"] = max(_least["size"], concurrency + SPARE_CONNECTIONS)


def least_pool_size() -> int:
    """The smallest pool this process needs (1 until a worker says its concurrency)."""
    return _least["size"]


@cache
def redis_client(url: str, pool: Pool) -> redis.Redis:
    """The process's client for ``url`` with ``pool``'s limits."""
    connections = redis.BlockingConnectionPool.from_url(
        url,
        max_connections=pool.size,
        timeout=pool.wait_s,
        decode_responses=True,
        health_check_interval=30,
        socket_timeout=pool.timeout_s,
        socket_connect_timeout=min(pool.timeout_s, 10.0),
        socket_keepalive=True,
    )
    return redis.Redis(connection_pool=connections)


def as_text(value: bytes | str) -> str:
    """A Redis reply as text (clients made without ``decode_responses`` return bytes)."""
    return value.decode() if isinstance(value, bytes) else value
