"""One heavy request to a real ``suture serve`` never stalls another tenant's (issue 33, rows 2 and 5).

The attack: one authenticated ``POST /v1/jobs`` of 9.5 MB holding ``{"k0":1, …, "k799999":1}`` took
11.8 s to answer with a 50 MB problem while another tenant's ``GET /v1/stats`` waited 11.55 s; a
9.5 MB body with no key to ``/v1/jobs/{id}/resume`` was parsed before its 401.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Callable, Iterator

import pytest
import requests

from tests.fixtures.api_server import API_KEY, ApiServer
from tests.fixtures.workers import CeleryStack

OTHER_KEY = "other-tenant-key-0123456789abcdef"
JOB = "0" * 32
pytestmark = pytest.mark.integration


@pytest.fixture
def server(
    celery_stack: Callable[..., CeleryStack], api_server: Callable[..., ApiServer]
) -> Iterator[ApiServer]:
    keys = json.dumps([API_KEY, OTHER_KEY])
    yield api_server(celery_stack("http://127.0.0.1:9/v1"), SUTURE_API__KEYS=keys)


def _bomb() -> bytes:
    body = json.dumps({f"k{i}": 1 for i in range(800_000)}, separators=(",", ":")).encode()
    assert 9_000_000 < len(body) < 10 * 1024 * 1024  # the 9.5 MB, under api.max_body_bytes
    return body


def _stats_ms(server: ApiServer, session: requests.Session) -> float:
    started = time.perf_counter()
    response = session.get(
        f"{server.url}/v1/stats", headers={"Authorization": f"Bearer {OTHER_KEY}"}, timeout=30
    )
    assert response.status_code == 200
    return (time.perf_counter() - started) * 1000


def test_the_800k_key_body_is_refused_small_and_fast_while_another_tenant_is_served(
    server: ApiServer,
) -> None:
    # Given another tenant's request time alone
    bomb, session = _bomb(), requests.Session()
    alone = [_stats_ms(server, session) for _ in range(40)]
    # When the 800k-key body is posted again and again while that tenant keeps asking
    answers: list[requests.Response] = []
    stop = threading.Event()

    def attack() -> None:
        while not stop.is_set():
            answers.append(
                server.call("POST", "/v1/jobs", data=bomb, headers={"Content-Type": "application/json"})
            )

    attacker = threading.Thread(target=attack)
    attacker.start()
    try:
        deadline = time.monotonic() + 30
        while not answers and time.monotonic() < deadline:  # at least one bomb sent whole
            time.sleep(0.01)
        during = [_stats_ms(server, session) for _ in range(80)]
    finally:
        stop.set()
        attacker.join(timeout=60)
    # Then the bomb is a 422 of a few KB, answered in well under a second
    assert answers and all(a.status_code == 422 for a in answers)
    assert all(len(a.content) < 4096 for a in answers)
    assert max(a.elapsed.total_seconds() for a in answers) < 2.0
    # ...and the other tenant's median stays within 100 ms of its time alone, and its p99 within 200 ms
    # of its p99 alone (the baseline measured in the same run: on an idle machine alone is ~10 ms, so
    # this is the 200 ms it was; when the suite's other processes load the machine, the bomb is still
    # allowed only 200 ms more than the load already costs)
    p99 = statistics.quantiles(during, n=100)[98]
    p99_alone = statistics.quantiles(alone, n=100)[98]
    assert statistics.median(during) < statistics.median(alone) + 100, (alone, during)
    assert p99 < p99_alone + 200, (p99_alone, during)


def test_many_invalid_fields_list_the_first_20_and_say_how_many(server: ApiServer) -> None:
    # Given a body with 200 unknown keys (under the key cap: each one judged)
    body = {"input": "x" * 50} | {f"k{i}": 1 for i in range(200)}
    response = server.call("POST", "/v1/jobs", json=body)
    # Then 20 are listed, the detail counts them all, and the problem is small
    problem = response.json()
    assert response.status_code == 422 and len(problem["errors"]) == 20
    assert "200 errors; the first 20 are listed" in problem["detail"]
    assert len(response.content) < 4096


@pytest.mark.parametrize(
    "body", [b'{"feedback":' + b"[" * 100_000, b'{"feedback":"' + b"x" * 9_500_000 + b'"}']
)
def test_a_body_without_a_key_is_refused_before_it_is_read(server: ApiServer, body: bytes) -> None:
    # Given a large or deep body with no API key, to resume and to enqueue
    for path in (f"/v1/jobs/{JOB}/resume", "/v1/jobs"):
        started = time.perf_counter()
        response = server.call("POST", path, key="", data=body, headers={"Content-Type": "application/json"})
        # Then it is a 401 (not a 422 from parsing it), at once
        assert response.status_code == 401, (path, response.text[:200])
        assert time.perf_counter() - started < 0.5
