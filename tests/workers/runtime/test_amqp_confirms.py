"""On an AMQP broker (the local RabbitMQ) suture publishes with publisher confirms (the default)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from suture.config.settings import load_settings
from suture.workers.runtime.app import app, configure
from tests.fixtures.rabbitmq import purge_queues, require_rabbitmq
from tests.fixtures.workers import REPO

# Run in a fresh interpreter, as a worker or producer configures once (this process re-configures the
# Celery app many times). Confirm mode is a property of the channel that published, which is read from the
# producer: the connection's default channel is not always it (a publish retried after a connection error
# goes out on a new channel), and reading that one made this test fail on two loaded CI runs.
# Warnings (a retried publish among them) go to stderr, shown when the test fails.
PUBLISH = """
import logging
import sys
logging.basicConfig(level=logging.WARNING)
import amqp.channel
_Channel = amqp.channel.Channel
def _traced(name):
    original = getattr(_Channel, name)
    def traced(self, *args, **kwargs):
        print(f"channel {self.channel_id}: {name}", file=sys.stderr)
        return original(self, *args, **kwargs)
    return traced
for _name in ("_do_revive", "basic_publish_confirm", "confirm_select", "_basic_publish"):
    setattr(_Channel, _name, _traced(_name))
from suture.config.settings import load_settings
from suture.workers.runtime.app import app, configure, waiting_messages
overrides = {"broker_url": sys.argv[1], "redis_url": sys.argv[2]}
configure(load_settings(overrides=overrides))
waiting_messages()  # the queues declared, as a worker would
with app.connection_for_write() as connection:
    # The producer's channel after the publish is the one that published: Celery retries a publish that
    # met a connection error on a new channel, so the connection's default channel may not be it.
    producer = app.amqp.Producer(connection, auto_declare=False)
    app.send_task("suture.merge", args=["job", 1], producer=producer)
    print(producer.channel._confirm_selected)
    options = connection.transport_options
    print("confirm_publish:", connection.connection.confirm_publish, options, file=sys.stderr)
print(waiting_messages(("suture.control",))["suture.control"])
"""


@pytest.fixture
def rabbitmq(redis_url: str) -> Iterator[str]:
    url = require_rabbitmq()
    purge_queues(url)
    yield url
    purge_queues(url)


def test_a_publish_to_rabbitmq_is_confirmed_by_the_broker(rabbitmq: str, redis_url: str) -> None:
    # Given a process configured on RabbitMQ with the default settings
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}
    # When it publishes a task message
    done = subprocess.run(
        [sys.executable, "-c", PUBLISH, rabbitmq, redis_url],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    # Then its channel was in confirm mode (the publish returned only once the broker had the message),
    # and the message is in the queue
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "1"], done.stderr[-2000:]


def test_rabbitmq_with_the_setting_off_publishes_without_confirms(rabbitmq: str, redis_url: str) -> None:
    overrides = {"broker_url": rabbitmq, "redis_url": redis_url, "network": {"amqp_confirm_publish": False}}
    configure(load_settings(overrides=overrides))
    assert "confirm_publish" not in app.conf.broker_transport_options


def test_a_redis_broker_gets_no_amqp_option(redis_url: str) -> None:
    configure(load_settings(overrides={"broker_url": redis_url, "redis_url": redis_url}))
    assert "confirm_publish" not in app.conf.broker_transport_options
