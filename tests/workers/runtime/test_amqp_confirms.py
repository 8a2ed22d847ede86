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
# Celery app many times). What is checked is that the task message's own publish waited for the broker's
# confirm: py-amqp's confirming publish is wrapped to record each publish it saw confirmed. (Reading the
# channel's confirm flag after send_task, as this test first did, failed on loaded full runs: send_task
# publishes a task-sent event after the task on the same channel, and the flag is reset whenever py-amqp
# reopens a channel the broker closed; what closed it was not found.) Each channel call and reopening is
# traced to stderr, shown when the test fails.
PUBLISH = """
import logging
import sys
logging.basicConfig(level=logging.WARNING)
import amqp.channel
_Channel = amqp.channel.Channel
def _traced(name):
    original = getattr(_Channel, name)
    def traced(self, *args, **kwargs):
        where = (kwargs.get("exchange"), kwargs.get("routing_key"))
        print(f"channel {self.channel_id}: {name} {where}", file=sys.stderr)
        result = original(self, *args, **kwargs)
        if name == "basic_publish_confirm":  # returns once the broker acked the message
            print("confirmed", *where)
        return result
    return traced
for _name in ("_do_revive", "basic_publish_confirm", "confirm_select", "_basic_publish"):
    setattr(_Channel, _name, _traced(_name))
from suture.config.settings import load_settings
from suture.workers.runtime.app import app, configure, waiting_messages
overrides = {"broker_url": sys.argv[1], "redis_url": sys.argv[2]}
configure(load_settings(overrides=overrides))
waiting_messages()  # the queues declared, as a worker would
with app.connection_for_write() as connection:
    app.send_task("suture.merge", args=["job", 1], connection=connection)
print("waiting", waiting_messages(("suture.control",))["suture.control"])
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
    # Then its publish waited for the broker's confirm (it returned only once the broker had the message),
    # and the message is in the queue
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert "confirmed suture.tasks suture.control" in lines, (lines, done.stderr[-2000:])
    assert lines[-1] == "waiting 1", (lines, done.stderr[-2000:])


def test_rabbitmq_with_the_setting_off_publishes_without_confirms(rabbitmq: str, redis_url: str) -> None:
    overrides = {"broker_url": rabbitmq, "redis_url": redis_url, "network": {"amqp_confirm_publish": False}}
    configure(load_settings(overrides=overrides))
    assert "confirm_publish" not in app.conf.broker_transport_options


def test_a_redis_broker_gets_no_amqp_option(redis_url: str) -> None:
    configure(load_settings(overrides={"broker_url": redis_url, "redis_url": redis_url}))
    assert "confirm_publish" not in app.conf.broker_transport_options
