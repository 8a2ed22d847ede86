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

A ``sentinel://`` URL (``sentinel://[:password@]host:port[/db];sentinel://host:port;...``, as kombu reads it)
names the sentinels, not the primary: the client asks them for the primary at every new connection, and a
connection that finds its server demoted (``ReadOnlyError``) is dropped, so the next command reaches the new
primary (redis-py's ``SentinelManagedConnection``). ``Sentinels`` carries what the URL cannot: the name the
primary is monitored under and the sentinels' own password (settings ``sentinel.*``).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import unquote, urlsplit

import redis
import redis.asyncio as aioredis
from redis.sentinel import Sentinel, SentinelConnectionPool

from suture.config.network_settings import NetworkSettings

SENTINEL_SCHEME = "sentinel://"
SENTINEL_PORT = 26379

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


@dataclass(frozen=True)
class Sentinels:
    """What a ``sentinel://`` URL needs beside it: the primary's monitored name, the sentinels' password."""

    master_name: str | None
    password: str | None = None


class SentinelUrlError(ValueError):
    """A ``sentinel://`` URL that cannot name a primary; str() says what is missing (never a password)."""


@cache
def redis_client(
    url: str,
    pool: Pool,
    network: NetworkSettings | None = None,
    *,
    sentinels: Sentinels | None = None,
    decode: bool = True,
) -> redis.Redis:
    """The process's client for ``url`` with ``pool``'s limits and ``network``'s socket options (the
    defaults' when None); a ``sentinel://`` URL gives its primary's, found through the sentinels."""
    network = network or NetworkSettings()
    if url.startswith(SENTINEL_SCHEME):
        return _primary_client(url, pool, sentinels or Sentinels(None), network, decode)
    connections = redis.BlockingConnectionPool.from_url(
        url,
        max_connections=pool.size,
        timeout=pool.wait_s,
        decode_responses=decode,
        **connection_options(network, pool.timeout_s),
        **_demotion_aware(url),
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


class _DemotionAwareConnection(redis.Connection):
    """A connection that drops itself when its server was demoted to a replica (``READONLY``): the next
    command connects again, to wherever the address points now (a managed Redis's endpoint moves to the new
    primary at a failover), as ``SentinelManagedConnection`` does for a ``sentinel://`` URL."""

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().read_response(*args, **kwargs)
        except redis.exceptions.ReadOnlyError:
            self.disconnect()
            raise redis.exceptions.ConnectionError("the server was demoted to a replica (READONLY)") from None


class _DemotionAwareSSLConnection(_DemotionAwareConnection, redis.SSLConnection):
    """The same over TLS (``rediss://``)."""


def _demotion_aware(url: str) -> dict[str, Any]:
    if url.startswith("rediss://"):
        return {"connection_class": _DemotionAwareSSLConnection}
    if url.startswith("redis://"):
        return {"connection_class": _DemotionAwareConnection}
    return {}  # unix:// keeps redis-py's own


class _BlockingSentinelPool(SentinelConnectionPool, redis.BlockingConnectionPool):
    """The sentinel-discovered primary's connections, bounded and blocking like the plain store pool."""


def _primary_client(
    url: str, pool: Pool, sentinels: Sentinels, network: NetworkSettings, decode: bool
) -> redis.Redis:
    if not sentinels.master_name:
        raise SentinelUrlError(
            "a sentinel:// URL needs the primary's name: set sentinel.master_name "
            "(SUTURE_SENTINEL__MASTER_NAME)"
        )
    hosts, params = parse_sentinel_url(url)
    timeouts = connection_options(network, pool.timeout_s)
    timeouts.pop("health_check_interval")  # the sentinels' connections are short-lived queries
    sentinel_kwargs = dict(timeouts, password=sentinels.password) if sentinels.password else dict(timeouts)
    manager = Sentinel(hosts, sentinel_kwargs=sentinel_kwargs, **timeouts)
    return manager.master_for(
        sentinels.master_name,
        connection_pool_class=_BlockingSentinelPool,
        max_connections=pool.size,
        timeout=pool.wait_s,
        decode_responses=decode,
        health_check_interval=network.health_check_interval_s,
        **params,
    )


def parse_sentinel_url(url: str) -> tuple[list[tuple[str, int]], dict[str, Any]]:
    """The sentinels' addresses in a ``sentinel://`` URL, and the primary's ``db``, ``username`` and
    ``password``
    (from the first part that gives each)."""
    hosts: list[tuple[str, int]] = []
    params: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in url.split(";"))):
        split = urlsplit(part)
        if split.scheme != "sentinel" or not split.hostname:
            raise SentinelUrlError(f"not a sentinel address: {split.scheme}://{split.hostname or ''}")
        hosts.append((split.hostname, split.port or SENTINEL_PORT))
        if split.password and "password" not in params:
            params["password"] = unquote(split.password)
            if split.username:
                params["username"] = unquote(split.username)
        db = split.path.strip("/")
        if db and "db" not in params:
            params["db"] = int(db)
    if not hosts:
        raise SentinelUrlError("a sentinel:// URL with no sentinel address")
    return hosts, params


def as_text(value: bytes | str) -> str:
    """A Redis reply as text (clients made without ``decode_responses`` return bytes)."""
    return value.decode() if isinstance(value, bytes) else value
