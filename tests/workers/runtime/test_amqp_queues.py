"""On RabbitMQ suture's queues are quorum queues; a broker still holding classic ones is refused with one line
at worker start, and ``suture migrate-queues`` moves them, messages kept (the local RabbitMQ, own vhost)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from kombu import Connection, Queue
from kombu.transport.native_delayed_delivery import (
    bind_queue_to_native_delayed_delivery_exchange,
    declare_native_delayed_delivery_exchanges_and_queues,
)

from suture.config.settings import load_settings
from suture.workers.errors import BrokerUnavailable
from suture.workers.runtime.amqp_queues import QueueTypeMismatch, check_queue_types
from suture.workers.runtime.app import (
    ALL_QUEUES,
    CONTROL_QUEUE,
    MODEL_QUEUE,
    app,
    configure,
    waiting_messages,
)
from suture.workers.runtime.publish import publish, publish_or_refuse
from tests.fixtures.rabbitmq import rabbitmqctl, require_rabbitmq
from tests.fixtures.workers import REPO


@pytest.fixture
def rabbitmq(redis_url: str) -> Iterator[str]:
    url = require_rabbitmq()
    yield url
    configure(load_settings(overrides={"broker_url": redis_url, "redis_url": redis_url}))  # the next test's


def queue_types(url: str) -> dict[str, str]:
    vhost = url.rsplit("/", 1)[1]
    lines = rabbitmqctl("list_queues", "-p", vhost, "--no-table-headers", "name", "type").splitlines()
    return dict(line.split("\t") for line in lines if line.strip())


def an_old_deployment(url: str) -> None:
    """suture.model as a classic queue, as suture declared it before quorum queues, with one message."""
    with Connection(url) as connection:
        connection.default_channel.queue_delete(MODEL_QUEUE)
        Queue(MODEL_QUEUE, routing_key=MODEL_QUEUE).bind(connection.default_channel).declare()
        connection.Producer().publish({"old": 1}, routing_key=MODEL_QUEUE, headers={"task": "suture.attempt"})


def suture(url: str, redis_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}
    env |= {"SUTURE_BROKER_URL": url, "SUTURE_REDIS_URL": redis_url}
    command = [sys.executable, "-m", "suture", *args]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=60)


def test_suture_s_queues_are_quorum_queues_on_rabbitmq(rabbitmq: str, redis_url: str) -> None:
    # Given the default settings on RabbitMQ / When the queues are declared (as a worker or producer does)
    configure(load_settings(overrides={"broker_url": rabbitmq, "redis_url": redis_url}))
    waiting_messages(ALL_QUEUES)
    # Then each is a quorum queue
    types = queue_types(rabbitmq)
    assert {name: types[name] for name in ALL_QUEUES} == dict.fromkeys(ALL_QUEUES, "quorum")


def test_classic_queues_stay_the_setting_s_choice(rabbitmq: str, redis_url: str) -> None:
    overrides = {"broker_url": rabbitmq, "redis_url": redis_url, "network": {"amqp_queue_type": "classic"}}
    configure(load_settings(overrides=overrides))
    assert app.conf.task_queues is None  # Celery's own declarations, as before quorum queues


def test_a_worker_refuses_a_classic_queue_and_migrate_queues_moves_it(rabbitmq: str, redis_url: str) -> None:
    # Given a broker holding suture.model as a classic queue with a message in it
    an_old_deployment(rabbitmq)
    # When a worker starts / Then it refuses with one line naming the queue and the way out
    started = suture(rabbitmq, redis_url, "worker", "-c", "1")
    assert started.returncode == 2, started.stderr[-2000:]
    [line] = started.stderr.strip().splitlines()
    assert "suture.model as another queue type than quorum" in line and "suture migrate-queues" in line
    # When the operator runs the migration
    migrated = suture(rabbitmq, redis_url, "migrate-queues")
    assert migrated.returncode == 0, migrated.stderr[-2000:]
    assert "suture.model: 1 message(s) moved" in migrated.stdout
    # Then every queue is a quorum queue, the message is still there, and a worker's check passes
    configure(load_settings(overrides={"broker_url": rabbitmq, "redis_url": redis_url}))
    check_queue_types(app, ALL_QUEUES)
    assert queue_types(rabbitmq)[MODEL_QUEUE] == "quorum"
    assert waiting_messages((MODEL_QUEUE,))[MODEL_QUEUE] == 1
    # ...and running it again changes nothing
    again = suture(rabbitmq, redis_url, "migrate-queues")
    assert again.returncode == 0 and "suture.model: 0 message(s) moved" in again.stdout


def test_the_check_names_every_classic_queue(rabbitmq: str, redis_url: str) -> None:
    an_old_deployment(rabbitmq)
    configure(load_settings(overrides={"broker_url": rabbitmq, "redis_url": redis_url}))
    with pytest.raises(QueueTypeMismatch, match=r"holds suture\.model as another"):
        check_queue_types(app, ALL_QUEUES)
    with Connection(rabbitmq) as connection:  # the next test's queues are quorum ones again
        connection.default_channel.queue_delete(MODEL_QUEUE)


def test_a_producer_facing_a_classic_queue_is_told_to_migrate(rabbitmq: str, redis_url: str) -> None:
    # Given a broker still holding suture.control as a classic queue
    with Connection(rabbitmq) as connection:
        connection.default_channel.queue_delete(CONTROL_QUEUE)
        Queue(CONTROL_QUEUE, routing_key=CONTROL_QUEUE).bind(connection.default_channel).declare()
    settings = load_settings(overrides={"broker_url": rabbitmq, "redis_url": redis_url})
    # When a producer publishes / Then it is refused as the broker refusing the message, naming the way out
    with pytest.raises(BrokerUnavailable, match="suture migrate-queues"):
        publish_or_refuse(settings, "suture.merge", "job", 1)
    with Connection(rabbitmq) as connection:  # the next test's queues are quorum ones again
        connection.default_channel.queue_delete(CONTROL_QUEUE)


def test_a_countdown_waits_in_the_broker_on_quorum_queues(rabbitmq: str, redis_url: str) -> None:
    # Given quorum queues and the delayed-delivery exchanges a worker declares at start (Celery's bootstep)
    configure(load_settings(overrides={"broker_url": rabbitmq, "redis_url": redis_url}))
    waiting_messages(ALL_QUEUES)
    with Connection(rabbitmq) as connection:
        declare_native_delayed_delivery_exchanges_and_queues(connection, "quorum")
        bind_queue_to_native_delayed_delivery_exchange(connection, app.amqp.queues[CONTROL_QUEUE])
    # When a task is published with a 2 s countdown (a deferred call, a retry)
    publish(app, "suture.merge", "job", 1, countdown=2)
    # Then it is not in its queue at once (no worker holds it meanwhile), and is there once due
    assert waiting_messages((CONTROL_QUEUE,))[CONTROL_QUEUE] == 0
    deadline = time.monotonic() + 15
    while waiting_messages((CONTROL_QUEUE,))[CONTROL_QUEUE] == 0:
        assert time.monotonic() < deadline, "the delayed message never reached suture.control"
        time.sleep(0.2)
