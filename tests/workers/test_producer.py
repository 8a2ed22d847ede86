"""The producer API and the job CLI against a real Redis broker (no worker: messages stay queued).

These stacks publish at enqueue (``dispatch.enabled: false``, one FIFO queue): the dispatcher's path,
where a job waits in Redis until a worker's dispatcher sends it, is tested in
tests/workers/runtime/test_feeder.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

from suture.config.settings import Settings
from suture.workers.errors import BrokerUnavailable, InvalidJob, JobNotFound, JobTimeout
from suture.workers.producer import enqueue, get_job
from suture.workers.runtime.app import CeleryConfigError, check_time_limits, configure
from tests.fixtures.inline_flow import ScriptedCaller, drain, inline_flow, new_job
from tests.fixtures.redis_server import RedisServer, free_port
from tests.fixtures.workers import REPO, CeleryStack

DOCUMENT = "Mitochondria make ATP. Ribosomes make proteins. Secret-looking text 7f3a."


@pytest.fixture
def stack(celery_stack: Callable[..., CeleryStack]) -> CeleryStack:
    stack = celery_stack("http://127.0.0.1:9/v1", SUTURE_DISPATCH__ENABLED="false")
    configure(stack.settings)
    return stack


def queued_messages(stack: CeleryStack) -> list[dict[str, object]]:
    client = redis.Redis.from_url(str(stack.settings.broker_url))
    return [json.loads(raw) for raw in client.lrange("suture.model", 0, -1)]


def test_enqueue_stores_the_job_and_publishes_only_its_id(stack: CeleryStack) -> None:
    # Given a document / When it is enqueued / Then the job is queued and the message shows ids only
    handle = enqueue("quiz", DOCUMENT, questions=2, settings=stack.settings)
    assert handle.status() == "queued"
    [message] = queued_messages(stack)
    headers = message["headers"]
    assert isinstance(headers, dict)
    assert (headers["task"], headers["argsrepr"]) == ("suture.attempt", repr((handle.id, 1)))
    assert "Mitochondria" not in json.dumps(message)
    assert message["content-type"] == "application/json"


def test_same_idempotency_key_gives_the_same_job(stack: CeleryStack) -> None:
    first = enqueue("quiz", DOCUMENT, idempotency_key="order-17", settings=stack.settings)
    again = enqueue("quiz", DOCUMENT, idempotency_key="order-17", settings=stack.settings)
    other = enqueue("quiz", DOCUMENT, idempotency_key="order-18", settings=stack.settings)
    assert first.id == again.id != other.id
    # the still-queued job is re-published (safe: the attempt applies once), never re-created
    assert [m["headers"]["argsrepr"] for m in queued_messages(stack)].count(repr((first.id, 1))) == 2  # type: ignore[index]


@pytest.mark.parametrize(
    ("document", "questions", "problem"), [("  ", None, "empty"), (DOCUMENT, 0, "from 1 to 100")]
)
def test_bad_jobs_are_refused_before_anything_is_stored(
    stack: CeleryStack, document: str, questions: int | None, problem: str
) -> None:
    with pytest.raises(InvalidJob, match=problem):
        enqueue("quiz", document, questions=questions, settings=stack.settings)
    assert queued_messages(stack) == []


def test_waiting_for_a_result_times_out_clearly(stack: CeleryStack) -> None:
    handle = enqueue("quiz", DOCUMENT, settings=stack.settings)
    with pytest.raises(JobTimeout, match=r"no result after 0.2 s"):
        handle.result(timeout_s=0.2)
    with pytest.raises(JobNotFound):
        get_job("not-a-job", stack.settings)


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"client": {"timeout_s": 400}}, "client.timeout_s=400"),
        ({"client": {"call_budget_s": 300}}, "client.call_budget_s=300"),
        ({"worker": {"soft_time_limit_s": 200}}, "worker.soft_time_limit_s=200"),
        ({"worker": {"redis_timeout_s": 300}}, "worker.redis_timeout_s=300"),
        ({"worker": {"soft_time_limit_s": 400}}, "worker.soft_time_limit_s=400"),
        ({"worker": {"visibility_timeout_s": 300}}, "worker.time_limit_s=360"),
    ],
)
def test_misordered_time_limits_are_refused_with_the_values_named(overrides: dict, named: str) -> None:
    settings = Settings(**overrides)
    with pytest.raises(CeleryConfigError, match=named.replace(".", r"\.")):
        check_time_limits(settings)


def test_producer_import_starts_nothing() -> None:
    # Given an unreachable Redis / When the producer module is imported / Then nothing connects
    env = {
        **os.environ,
        "SUTURE_REDIS_URL": "redis://127.0.0.1:1/0",
        "SUTURE_BROKER_URL": "redis://127.0.0.1:1/0",
    }
    code = "import suture.workers.producer, sys; sys.exit(0 if 'celery' not in sys.modules else 3)"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()


def test_cli_enqueue_prints_the_id_alone_and_status_reads_it(stack: CeleryStack, tmp_path: Path) -> None:
    source = tmp_path / "doc.txt"
    source.write_text(DOCUMENT * 2)  # the CLI reads it as `generate` does: at least batch.min_document_chars
    enqueued = stack.cli("enqueue", str(source), "--questions", "2", "--idempotency-key", "k")
    assert enqueued.returncode == 0, enqueued.stderr
    job_id = enqueued.stdout.strip()
    assert enqueued.stdout == f"{job_id}\n" and len(job_id) == 32
    assert stack.cli("status", job_id).stdout == "queued\n"
    again = stack.cli("enqueue", str(source), "--questions", "2", "--idempotency-key", "k")
    assert again.stdout.strip() == job_id
    # The same key with another request is refused, naming the key and its job
    other = stack.cli("enqueue", str(source), "--idempotency-key", "k")
    assert other.returncode == 2 and "k" in other.stderr and job_id in other.stderr


def test_cli_enqueue_stores_the_teaching_flags_with_the_job(stack: CeleryStack, tmp_path: Path) -> None:
    source = tmp_path / "doc.txt"
    source.write_text(DOCUMENT * 2)
    enqueued = stack.cli(
        "enqueue",
        str(source),
        "--questions",
        "2",
        "--kinds",
        "single,true_false",
        "--language",
        "fr",
        "--difficulty",
        "medium",
        "--audience",
        "adult learners",
        "--options",
        "3",
    )
    assert enqueued.returncode == 0, enqueued.stderr
    rules = get_job(enqueued.stdout.strip(), stack.settings).spec()["contract_params"]["rules"]
    assert rules["question_kinds"] == ["single", "true_false"] and rules["language"] == "fr"
    assert rules["difficulty"] == "medium" and rules["audience"] == "adult learners"
    assert rules["options_per_question"] == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("enqueue", "/no/such/file.txt"), "no such file"),
        (("status", "nope"), "no such job: nope"),
        (("result", "nope", "--timeout", "0.1"), "no such job: nope"),
        (("enqueue", "README.md", "--callback", "https://169.254.169.254/x"), "(metadata address)"),
        (("enqueue", "README.md", "--callback", "gopher://example.org:70/"), "scheme 'gopher'"),
        (("enqueue", "README.md", "--callback", "suture.watchdog"), "webhook.allowed_tasks"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(stack: CeleryStack, args: tuple[str, ...], message: str) -> None:
    done = stack.cli(*args)
    assert done.returncode == 2
    assert message in done.stderr and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


@pytest.fixture
def broker_down(celery_stack: Callable[..., CeleryStack]) -> tuple[CeleryStack, int]:
    """A stack whose store works and whose broker URL (with a password) names a port nobody listens on."""
    port = free_port()
    stack = celery_stack(
        "http://127.0.0.1:9/v1",
        broker_url=f"redis://:hunter2@127.0.0.1:{port}/0",
        SUTURE_DISPATCH__ENABLED="false",
    )
    return stack, port


def stored_keys(stack: CeleryStack) -> list[str]:
    client = redis.Redis.from_url(str(stack.settings.redis_url), decode_responses=True)
    return sorted(client.scan_iter(match="suture:*"))


def test_enqueue_with_the_broker_down_fails_fast_and_leaves_no_job_behind(
    broker_down: tuple[CeleryStack, int], tmp_path: Path
) -> None:
    # Given a broker that is down
    stack, port = broker_down
    # When a job is enqueued with an idempotency key
    started = time.monotonic()
    with pytest.raises(BrokerUnavailable) as caught:
        enqueue("quiz", DOCUMENT, idempotency_key="order-down", settings=stack.settings)
    # Then it fails within seconds, in one line naming the broker and never the password,
    # and the job it had stored is gone with its idempotency key
    assert time.monotonic() - started < 5
    message = str(caught.value)
    assert message.startswith("message broker unavailable: ") and message.endswith("nothing was enqueued")
    assert "hunter2" not in message and "\n" not in message
    assert stored_keys(stack) == []
    # When the broker is back on its port / Then the same key enqueues a new job, published once
    broker = RedisServer(tmp_path, port, appendonly=False)
    broker.start()
    try:
        handle = enqueue("quiz", DOCUMENT, idempotency_key="order-down", settings=stack.settings)
        assert handle.status() == "queued"
        messages = redis.Redis.from_url(f"redis://127.0.0.1:{port}/0").lrange("suture.model", 0, -1)
        assert [json.loads(m)["headers"]["argsrepr"] for m in messages] == [repr((handle.id, 1))]
    finally:
        broker.stop()


def test_cli_enqueue_with_the_broker_down_exits_2_with_one_line(
    broker_down: tuple[CeleryStack, int], tmp_path: Path
) -> None:
    source = tmp_path / "doc.txt"
    source.write_text(DOCUMENT * 2)  # the CLI reads it as `generate` does: at least batch.min_document_chars
    done = broker_down[0].cli("enqueue", str(source))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("suture: message broker unavailable: ") and done.stderr.count("\n") == 1
    assert "hunter2" not in done.stderr and "Traceback" not in done.stderr


def test_a_stored_job_whose_first_message_never_went_out_is_sent_by_the_stall_nudge(redis_url: str) -> None:
    # Given a queued job whose first attempt was never published (the producer could not remove it either)
    flow, dispatcher = inline_flow(redis.Redis.from_url(redis_url, decode_responses=True), ScriptedCaller())
    job_id = new_job(flow)
    # When the watchdog runs before and after the stall time has passed
    flow.watchdog(now_s=time.time() + 1)
    early = list(dispatcher.sent)
    flow.watchdog(now_s=time.time() + flow.settings.worker.stall_s + 1)
    # Then only the late run re-sends its first attempt, and the job runs to delivery
    assert (early, dispatcher.sent) == ([], [("attempt", (job_id, 1))])
    assert drain(flow, dispatcher) == ["delivered"]
    assert flow.store.status(job_id) == "delivered"
