"""The guard that turns kombu's detached-transport race into a connection error a worker survives."""

from __future__ import annotations

import pytest
import redis
from kombu import Connection

from workers.kombu_patches import tolerate_detached_transport


def test_a_channel_of_a_detached_transport_raises_a_connection_error(redis_url: str) -> None:
    # Given the guard and a real redis channel whose transport was detached, as Celery's collect() does
    tolerate_detached_transport()
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
    tolerate_detached_transport()
    with Connection(redis_url) as connection:
        params = connection.channel()._connparams()
    assert params["host"] in {"127.0.0.1", "localhost"}
