"""Every Redis connection suture opens, and the socket options of Celery's: one place says how a silent
peer is noticed.

``connection_options`` is what each connection gets (a connect timeout, a read timeout, TCP keep-alive with
short probes, a bound on unacknowledged data, a health check); ``redis_client`` and ``async_redis_client``
build the job store's, the dispatcher's and the API's clients with it, and ``suture.workers.runtime.app``
hands the same options to kombu (broker) and Celery (result backend). A silent partition (a host gone
without a reset, packets dropped) then costs ``network.dead_after_s`` (25 s), not the kernel's
2 hours of keep-alive or 15 minutes of retransmissions.

The job store's clients: one bounded pool per process and URL, sized to its concurrency.

Without a socket timeout a half-open connection (a Redis host gone without a reset) blocks a worker
thread for good: Celery's threads pool enforces no time limit to end it; keep-alive finds such a peer
on idle pooled connections too. The pool is a blocking one: a caller finding every connection busy
waits ``Pool.wait_s`` for one (then it is an outage, retried like any other), never "Too many
connections". A worker raises the pool to its concurrency at start-up (``size_pool_for``).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from functools import cache
from typing import Any

import redis
import redis.asyncio as aioredis

from suture.config.network_settings import NetworkSettings

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


def keepalive_options(network: NetworkSettings) -> dict[int, int]:
    """TCP keep-alive probes as ``setsockopt`` options (those this platform has), and TCP_USER_TIMEOUT.

    TCP_USER_TIMEOUT bounds how long sent data may stay unacknowledged: keep-alive probes only an idle
    connection, and a write into a silent partition would otherwise retransmit for 15 minutes.
    """
    wanted = {
        "TCP_KEEPIDLE": network.keepalive_idle_s,
        "TCP_KEEPINTVL": network.keepalive_interval_s,
        "TCP_KEEPCNT": network.keepalive_probes,
        "TCP_USER_TIMEOUT": network.dead_after_s * 1000,  # milliseconds
    }
    return {getattr(socket, name): value for name, value in wanted.items() if hasattr(socket, name)}


def connection_options(network: NetworkSettings, timeout_s: float) -> dict[str, Any]:
    """redis-py's (and kombu's Redis transport's) options for a connection whose commands wait ``timeout_s``
    at most."""
    return {
        "socket_timeout": timeout_s,
        "socket_connect_timeout": min(network.connect_timeout_s, timeout_s),
        "socket_keepalive": True,
        "socket_keepalive_options": keepalive_options(network),
        "health_check_interval": network.health_check_interval_s,
    }


@cache
def redis_client(
    url: str, pool: Pool, network: NetworkSettings | None = None, *, decode: bool = True
) -> redis.Redis:
    """The process's client for ``url`` with ``pool``'s limits and ``network``'s socket options (the
    defaults' when None)."""
    connections = redis.BlockingConnectionPool.from_url(
        url,
        max_connections=pool.size,
        timeout=pool.wait_s,
        decode_responses=decode,
        **connection_options(network or NetworkSettings(), pool.timeout_s),
    )
    return redis.Redis(connection_pool=connections)


def async_redis_client(url: str, pool: Pool, network: NetworkSettings) -> aioredis.Redis:
    """A new asyncio client for ``url`` with ``pool``'s limits and ``network``'s socket options (one per
    event loop: an asyncio connection belongs to the loop that opened it)."""
    connections = aioredis.BlockingConnectionPool.from_url(
        url,
        max_connections=pool.size,
        timeout=pool.wait_s,
        decode_responses=True,
        **connection_options(network, pool.timeout_s),
    )
    return aioredis.Redis(connection_pool=connections)


def as_text(value: bytes | str) -> str:
    """A Redis reply as text (clients made without ``decode_responses`` return bytes)."""
    return value.decode() if isinstance(value, bytes) else value
