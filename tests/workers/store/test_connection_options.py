"""Every Redis connection suture or Celery opens notices a silent peer: connect and read timeouts, short
keep-alive probes and a bound on unacknowledged data, checked on real sockets to a real Redis."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import redis

from suture.config.settings import Settings
from suture.workers.aio import _state
from suture.workers.runtime.app import configure
from suture.workers.runtime.feeder import queue_lengths_client
from suture.workers.store.job_store import get_store

TCP = socket.IPPROTO_TCP


def _settings(redis_url: str) -> Settings:
    return Settings(broker_url=redis_url, redis_url=redis_url)


def _socket_of(client: redis.Redis) -> socket.socket:
    client.ping()
    connection = client.connection_pool.get_connection()
    try:
        sock = connection._sock
        assert sock is not None
        return sock
    finally:
        client.connection_pool.release(connection)


def _assert_short_probes(sock: socket.socket, *, read_timeout_s: float) -> None:
    assert sock.gettimeout() == read_timeout_s
    assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
    assert sock.getsockopt(TCP, socket.TCP_KEEPIDLE) == 10
    assert sock.getsockopt(TCP, socket.TCP_KEEPINTVL) == 5
    assert sock.getsockopt(TCP, socket.TCP_KEEPCNT) == 3
    assert sock.getsockopt(TCP, socket.TCP_USER_TIMEOUT) == 25_000  # ms: 10 + 3 x 5 s


def _assert_connect_timeout(kwargs: dict[str, Any]) -> None:
    assert kwargs["socket_connect_timeout"] == 5.0
    assert kwargs["health_check_interval"] == 10


def test_the_job_store_client_has_timeouts_and_short_keepalive(redis_url: str) -> None:
    # Given the store of default settings (the client workers, producers and the API share)
    client = get_store(_settings(redis_url)).redis

    # Then its sockets time out reads after worker.redis_timeout_s and probe a silent peer within 25 s
    _assert_short_probes(_socket_of(client), read_timeout_s=30.0)
    _assert_connect_timeout(client.connection_pool.connection_kwargs)


def test_the_dispatchers_queue_length_client_has_the_brokers_timeouts(redis_url: str) -> None:
    # Given the dispatcher's client on a Redis broker
    client = queue_lengths_client(_settings(redis_url))

    # Then it has the broker's read timeout (network.broker_timeout_s) and the short probes
    _assert_short_probes(_socket_of(client), read_timeout_s=10.0)
    _assert_connect_timeout(client.connection_pool.connection_kwargs)


def test_the_asyncio_client_has_timeouts_and_short_keepalive(redis_url: str) -> None:
    # Given the asyncio producer API's client (one per event loop)
    async def options() -> dict[str, Any]:
        client = _state(_settings(redis_url)).client
        await client.ping()
        connection = await client.connection_pool.get_connection()
        try:
            writer = connection._writer
            assert writer is not None
            sock = writer.get_extra_info("socket")
            kept = {
                "keepalive": sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
                "idle": sock.getsockopt(TCP, socket.TCP_KEEPIDLE),
                "user_timeout": sock.getsockopt(TCP, socket.TCP_USER_TIMEOUT),
            }
            return client.connection_pool.connection_kwargs | kept
        finally:
            await client.connection_pool.release(connection)
            await client.aclose()

    kwargs = asyncio.run(options())

    # Then reads time out (asyncio enforces socket_timeout itself) and the socket probes a silent peer
    assert kwargs["socket_timeout"] == 30.0
    _assert_connect_timeout(kwargs)
    assert (kwargs["keepalive"], kwargs["idle"], kwargs["user_timeout"]) == (1, 10, 25_000)


def test_the_celery_broker_connection_has_timeouts_and_short_keepalive(redis_url: str) -> None:
    # Given Celery's app configured for a Redis broker, and one of its real broker connections
    app = configure(_settings(redis_url))
    with app.connection_for_write() as connection:
        connection.ensure_connection(max_retries=1)
        with connection.default_channel.conn_or_acquire() as client:
            # Then a command waits at most network.broker_timeout_s, keep-alive probes are short,
            # and a timed-out write is never replayed blindly
            _assert_short_probes(_socket_of(client), read_timeout_s=10.0)
            kwargs = client.connection_pool.connection_kwargs
            _assert_connect_timeout(kwargs)
            assert kwargs["retry_on_timeout"] is False

    # And kombu's own BRPOP / pub/sub check runs every 10 s; connecting waits at most 5 s
    assert app.conf.broker_transport_options["health_check_interval"] == 10
    assert app.conf.broker_connection_timeout == 5.0


def test_the_celery_result_backend_has_timeouts_and_keepalive(redis_url: str) -> None:
    # Given Celery's Redis result backend of the same settings
    app = configure(_settings(redis_url))
    backend: Any = app.backend

    # Then its connections time out reads and connects, and have keep-alive and a health check
    sock = _socket_of(backend.client)
    assert sock.gettimeout() == 10.0
    assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
    _assert_connect_timeout(backend.connparams)


def test_an_amqp_broker_gets_read_write_timeouts_and_keepalive_probes() -> None:
    # Given settings naming an AMQP broker
    app = configure(Settings(broker_url="amqp://guest:guest@127.0.0.1:5672//", redis_url="redis://x/0"))
    options = app.conf.broker_transport_options

    # Then py-amqp is given read and write timeouts and the same keep-alive probes
    assert options["read_timeout"] == options["write_timeout"] == 10.0
    assert options["socket_settings"][socket.TCP_KEEPIDLE] == 10
    assert options["socket_settings"][socket.TCP_USER_TIMEOUT] == 25_000
