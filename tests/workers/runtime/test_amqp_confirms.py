"""On an AMQP broker (the local RabbitMQ) suture publishes with publisher confirms when configured to."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from suture.config.settings import load_settings
from suture.workers.runtime.app import app, configure, waiting_messages
from tests.fixtures.rabbitmq import purge_queues, require_rabbitmq


@pytest.fixture
def rabbitmq(redis_url: str) -> Iterator[str]:
    url = require_rabbitmq()
    yield url
    purge_queues(url)


def test_a_publish_to_rabbitmq_is_confirmed_by_the_broker(rabbitmq: str, redis_url: str) -> None:
    # Given suture configured on RabbitMQ with publisher confirms
    overrides = {"broker_url": rabbitmq, "redis_url": redis_url, "network": {"amqp_confirm_publish": True}}
    configure(load_settings(overrides=overrides))
    assert app.conf.broker_transport_options["confirm_publish"] is True
    waiting_messages()  # the queues declared, as a worker would
    # When a task message is published on a connection made from that configuration (a fresh one: a
    # pooled connection opened by an earlier test of this process would carry that test's options)
    with app.connection_for_write() as connection:
        app.send_task("suture.merge", args=["job", 1], connection=connection)
        # Then the channel is in confirm mode, so the publish returned only once the broker had the message
        assert connection.default_channel._confirm_selected
    assert waiting_messages(("suture.control",))["suture.control"] == 1


def test_a_redis_broker_gets_no_amqp_option(redis_url: str) -> None:
    configure(load_settings(overrides={"broker_url": redis_url, "redis_url": redis_url}))
    assert "confirm_publish" not in app.conf.broker_transport_options


def test_rabbitmq_without_the_setting_publishes_without_confirms(rabbitmq: str, redis_url: str) -> None:
    configure(load_settings(overrides={"broker_url": rabbitmq, "redis_url": redis_url}))
    assert "confirm_publish" not in app.conf.broker_transport_options
