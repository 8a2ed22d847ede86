"""The guard that turns kombu's detached-transport race into a connection error a worker survives."""

from __future__ import annotations

import pytest
import redis
from kombu import Connection

from suture.workers.runtime.kombu_patches import patch_redis_transport


def test_a_channel_of_a_detached_transport_raises_a_connection_error(redis_url: str) -> None:
    # Given the guard and a real redis channel whose transport was detached, as Celery's collect() does
    patch_redis_transport()
    connection = Connection(redis_url)
    channel = connection.channel()
    channel.connection.client = None
    # When kombu needs a client for it (an ack, a restore), Then it is a connection error kombu handles
    with pytest.raises(redis.exceptions.ConnectionError, match="transport detached"):
        channel._connparams()
    assert redis.exceptions.ConnectionError in connection.connection_errors
    connection.maybe_close_channel(channel)  # ignored like any connection error, no AttributeError


def test_an_attached_channel_is_unchanged(redis_url: str) -> None:
    # Given the guard and a live channel / When kombu builds its connection parameters / Then as before
    patch_redis_transport()
    with Connection(redis_url) as connection:
        params = connection.channel()._connparams()
    assert params["host"] in {"127.0.0.1", "localhost"}


def test_a_channel_reuses_one_client_per_pool(redis_url: str) -> None:
    # Given the patched transport and a live channel
    patch_redis_transport()
    with Connection(redis_url) as connection:
        channel = connection.channel()
        # When kombu asks for a client twice (a publish, then an ack)
        with channel.conn_or_acquire() as first, channel.conn_or_acquire() as second:
            # Then it is the same client, and it works
            assert first is second
            assert first.ping()
        # And a client passed in is used as is
        with channel.conn_or_acquire(first) as given:
            assert given is first
        # When the pool is replaced (a reconnect), Then a new client over the new pool is made
        channel._pool = None
        with channel.conn_or_acquire() as third:
            assert third is not first
            assert third.connection_pool is channel.pool
            assert third.ping()
