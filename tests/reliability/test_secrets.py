"""A run with canary secrets (API key, Sentry DSN key, Redis password), then a search of every artifact for
them.

The simulator requires the canary API key, Sentry points at a local envelope endpoint under a canary
key, and Redis runs with ``requirepass`` set to a canary (every URL carries it). The chaos profile
makes jobs soft-deliver, fail and get refused, so Sentry events and error paths are exercised too.
Searched afterwards: worker log files and captured stdout/stderr, Flower's log and API, job results
and a batch report built from them, Sentry envelopes, and every key and value of every Redis database
(Celery message bodies base64-decoded).
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from suture.workers.producer import enqueue
from suture.workers.reports.batch_report import BatchReport
from suture.workers.runtime.app import configure
from tests.fixtures.flower import FlowerServer, start_flower, stop_flower
from tests.fixtures.sentry_endpoint import PUBLIC_KEY, SentryEndpoint
from tests.fixtures.workers import CeleryStack
from tests.reliability.conftest import varied_document, wait_until

pytestmark = pytest.mark.integration

JOBS = 30


def canaries() -> dict[str, str]:
    """Fresh secret values nobody could have typed: found anywhere, they leaked."""
    return {
        "api key": f"sk-canary-{secrets.token_hex(12)}",
        "sentry dsn key": secrets.token_hex(16),
        "redis password": f"canarypw{secrets.token_hex(12)}",
    }


def leaks(where: str, text: str, values: dict[str, str]) -> list[str]:
    """``"<secret> in <where>"`` for every canary found in ``text``."""
    return [f"{name} in {where}" for name, value in values.items() if value in text]


def redis_dump(url: str) -> Iterator[tuple[str, str]]:
    """(``db/key``, text) for every key of every database, values read by type, message bodies decoded."""
    for db in range(16):
        client = redis.Redis.from_url(url.rsplit("/", 1)[0] + f"/{db}", decode_responses=True)
        try:
            for key in client.scan_iter(count=500):
                yield f"redis db{db} key name", key
                yield f"redis db{db} {key}", _value_text(client, key)
        finally:
            client.close()


def _value_text(client: redis.Redis, key: str) -> str:
    kind = client.type(key)
    if kind == "string":
        value: Any = client.get(key)
    elif kind == "hash":
        value = client.hgetall(key)
    elif kind == "list":
        value = client.lrange(key, 0, -1)
    elif kind == "set":
        value = sorted(client.smembers(key))
    elif kind == "zset":
        value = client.zrange(key, 0, -1, withscores=True)
    elif kind == "stream":
        value = client.xrange(key)
    else:
        value = f"<{kind}>"
    text = json.dumps(value, default=str)
    return text + "\n" + "\n".join(_decoded_bodies(text))


def _decoded_bodies(text: str) -> list[str]:
    """Kombu keeps message bodies base64-encoded: decode every "body" found in JSON inside the value."""
    found = []
    for chunk in text.split('\\"body\\": \\"')[1:] + text.split('"body": "')[1:]:
        encoded = chunk.split("\\", 1)[0].split('"', 1)[0]
        try:
            found.append(base64.b64decode(encoded, validate=True).decode("utf-8", "replace"))
        except ValueError:
            continue
    return found


def flower_texts(flower: FlowerServer, job_id: str, log_path: Path) -> Iterator[tuple[str, str]]:
    """Flower's task and worker API answers once it has seen ``job_id``'s task, then its log (after
    stopping it)."""
    try:
        yield (
            "flower /api/tasks",
            json.dumps(flower.wait_for("/api/tasks", lambda b: job_id in json.dumps(b))),
        )
        yield "flower /api/workers", json.dumps(flower.get_json("/api/workers?refresh=1"))
    finally:
        stop_flower(flower)
    yield "flower log", log_path.read_text(errors="replace")


@pytest.mark.timeout(240)
def test_no_canary_secret_appears_in_any_artifact(
    celery_stack: Callable[..., CeleryStack],
    simulator: Callable[..., str],
    sentry_endpoint: SentryEndpoint,
    password_redis: Callable[[str], str],
    capfd: pytest.CaptureFixture[str],
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    # Given canary secrets everywhere: a key-checking simulator, a Sentry DSN, a password-protected Redis
    values = canaries()
    redis_url = password_redis(values["redis password"])
    dsn = sentry_endpoint.dsn.replace(PUBLIC_KEY, values["sentry dsn key"])
    model_url = simulator("chaos", latency_scale=0.01, seed=5, api_key=values["api key"])
    env = {"SUTURE_REDIS_URL": redis_url, "SUTURE_RESULT_BACKEND": redis_url}
    env |= {"OPENAI_API_KEY": values["api key"], "SENTRY_DSN": dsn}
    stack = celery_stack(model_url, broker_url=redis_url, **env)
    configure(stack.settings)
    worker = stack.start_worker(concurrency=10)
    flower = start_flower(redis_url, tmp_path / "flower.log")
    request.addfinalizer(lambda: stop_flower(flower))
    # When a batch runs (some jobs soft-delivered, failed or refused) and Flower watches it
    handles = [enqueue("quiz", varied_document(i), questions=4, settings=stack.settings) for i in range(JOBS)]
    results = [h.result(timeout_s=120) for h in handles]
    statuses = {r["status"] for r in results}
    assert statuses - {"delivered"}, "every job delivered cleanly: Sentry and error paths were not exercised"
    wait_until(
        lambda: len(sentry_endpoint.events()) > 0, 20, "a Sentry event for a job that did not end cleanly"
    )
    artifacts: list[tuple[str, str]] = [("results", json.dumps(results))]
    artifacts += [("traces", json.dumps([h.trace() for h in handles]))]
    report = BatchReport(simulated=True)
    for i, result in enumerate(results):
        report.add_result({"path": f"doc{i}.md"}, result, f"traces/{i}.json")
    artifacts.append(("batch report", json.dumps(report.summary(), default=str)))
    artifacts += list(flower_texts(flower, handles[0].id, tmp_path / "flower.log"))
    worker.stop()
    artifacts.append(("worker log file", worker.log()))
    captured = capfd.readouterr()
    artifacts += [("captured stdout", captured.out), ("captured stderr", captured.err)]
    envelopes = sentry_endpoint.raw_bodies()
    artifacts += [
        (f"sentry envelope {i}", body.decode("utf-8", "replace")) for i, body in enumerate(envelopes)
    ]
    artifacts += list(redis_dump(redis_url))
    # Then none of the canaries appears anywhere
    # (controls: each searched source really holds this run's data, so the search proves something)
    assert "ready." in worker.log()
    for source in ("redis db", "flower /api/tasks", "results"):
        assert any(handles[0].id in text for where, text in artifacts if where.startswith(source)), source
    found = [leak for where, text in artifacts for leak in leaks(where, text, values)]
    assert not found, found
