"""Redis round trips per task on the hot path: what the Celery benchmark's throughput rests on.

Every task opens with one round trip (its execution counted and its job read by one script) and ends
with one write; a step that schedules a surgical round stores its action in that same write. Counted
at the socket: one send is one round trip (a pipeline or a script call is one send).
"""

from __future__ import annotations

from typing import Any

import pytest
import redis
from redis.connection import Connection

from tests.fixtures.inline_flow import ScriptedCaller, drain, inline_flow, new_job

pytestmark = pytest.mark.integration


class CountingConnection(Connection):
    """A redis-py connection that counts its sends (the class attribute is reset by each test)."""

    sends = 0

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        CountingConnection.sends += 1
        super().send_packed_command(command, check_health)


@pytest.mark.parametrize(
    ("imbalanced", "trips"),
    [
        (0, [("attempt", "delivered", 2)]),
        (
            2,
            [
                ("attempt", "applied", 2),
                ("slice", "stored", 2),
                ("slice", "stored", 2),
                ("merge", "delivered", 2),
            ],
        ),
    ],
)
def test_each_task_of_a_job_costs_two_round_trips(
    redis_url: str, imbalanced: int, trips: list[tuple[str, str, int]]
) -> None:
    # Given a flow whose Redis connections count their sends, and a job run once already (scripts loaded)
    pool = redis.ConnectionPool.from_url(
        redis_url, decode_responses=True, connection_class=CountingConnection
    )
    flow, dispatcher = inline_flow(redis.Redis(connection_pool=pool), ScriptedCaller(imbalanced))
    dispatcher.attempt(new_job(flow), 1)
    drain(flow, dispatcher)
    # When a job runs to delivery, its tasks one by one (first pass only, or with a surgical round)
    dispatcher.attempt(new_job(flow), 1)
    measured = []
    while dispatcher.sent:
        name = dispatcher.sent[0][0]
        CountingConnection.sends = 0
        [outcome] = drain(flow, dispatcher, limit=1)
        measured.append((name, outcome, CountingConnection.sends))
    # Then each task cost exactly two round trips
    assert measured == trips
