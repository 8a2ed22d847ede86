"""Oversized input is refused before it is read whole, and nothing of it is stored (issue 23, section 4).

Against a real Redis (and the real `suture serve`): a 100 MB text through `suture enqueue`, an
oversized text through the Python API, standard input and the HTTP API, and `suture validate
/dev/zero`. Each is one clear refusal naming ``max_input_bytes``; Redis holds no job afterwards.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

from suture.workers.errors import InvalidJob
from suture.workers.producer import enqueue
from tests.fixtures.api_server import ApiServer
from tests.fixtures.workers import CeleryStack

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 2 * 1024 * 1024  # the default max_input_bytes


@pytest.fixture
def stack(celery_stack: Callable[..., CeleryStack]) -> CeleryStack:
    """A Redis and the settings producers use (no worker: nothing may be enqueued anyway)."""
    return celery_stack("http://127.0.0.1:9/v1")


def stored_keys(stack: CeleryStack) -> list[bytes]:
    return sorted(redis.Redis.from_url(stack.settings.redis_url or "").keys("suture:*"))


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def test_suture_enqueue_refuses_a_100_mb_text_unread_and_stores_nothing(
    stack: CeleryStack, tmp_path: Path
) -> None:
    # Given a 100 MB text file (sparse: the test does not write 100 MB)
    big = tmp_path / "big.txt"
    with big.open("wb") as file:
        file.truncate(100 * 1024 * 1024)

    # When it is enqueued from the command line
    done = stack.cli("enqueue", str(big))

    # Then it is refused in one line naming the limit, and Redis holds no job, key or message
    assert done.returncode == 2
    assert "over max_input_bytes=2,097,152; it was not read" in one_line(done.stderr)
    assert stored_keys(stack) == []


def test_standard_input_past_the_limit_is_refused_after_reading_only_the_limit(stack: CeleryStack) -> None:
    # Given an endless stream on standard input
    command = [sys.executable, "-m", "suture", "enqueue", "-"]
    with open("/dev/zero", "rb") as endless:
        done = subprocess.run(
            command, cwd=ROOT, env=stack.env, stdin=endless, capture_output=True, text=True, timeout=60
        )

    # Then it is refused in one line, and nothing is stored
    assert done.returncode == 2
    assert (
        one_line(done.stderr)
        == "suture: -: more than 2,097,152 bytes (max_input_bytes); nothing past that was read"
    )
    assert stored_keys(stack) == []


def test_the_python_api_refuses_an_oversized_input_naming_the_field(stack: CeleryStack) -> None:
    # Given a text one byte over the limit once encoded (a two-byte character at its end)
    text = "a" * (LIMIT - 1) + "é"

    # When a web app enqueues it, Then InvalidJob names the input and the setting, and nothing is stored
    with pytest.raises(InvalidJob) as refused:
        enqueue("quiz", text, settings=stack.settings)
    assert refused.value.field == "input"
    assert "max_input_bytes=2,097,152" in str(refused.value)
    assert stored_keys(stack) == []
    # ...while exactly the limit is accepted (a job is stored and its message published), under a model
    # table that gives no context window (the packaged 400,000 tokens would refuse a 2 MB prompt first)
    prices = {m: p.model_copy(update={"context_tokens": None}) for m, p in stack.settings.prices.items()}
    unbounded = stack.settings.model_copy(update={"prices": prices})
    assert enqueue("quiz", "a" * (LIMIT - 2) + "é", settings=unbounded).id


def test_the_http_api_refuses_an_oversized_input_with_422(
    stack: CeleryStack, api_server: Callable[..., ApiServer]
) -> None:
    # Given `suture serve` (whose body cap, 10 MB, is above max_input_bytes)
    server = api_server(stack)

    # When a JSON body carries a 3 MB input
    reply = server.call("POST", "/v1/jobs", json={"contract": "quiz", "input": "word " * 600_000})

    # Then it is a 422 problem naming the field, and nothing is stored but the API's own rate bookkeeping
    assert reply.status_code == 422, reply.text
    problem = reply.json()
    assert problem["field"] == "input" and "max_input_bytes" in problem["detail"]
    assert not [key for key in stored_keys(stack) if key.startswith((b"suture:job:", b"suture:idem:"))]


@pytest.mark.parametrize("source", ["/dev/zero", "-"])
def test_suture_validate_of_an_endless_input_is_one_line_and_exit_2(source: str) -> None:
    # Given an endless input as the file to validate (the device, or a pipe on standard input)
    with open("/dev/zero", "rb") as endless:
        done = subprocess.run(
            [sys.executable, "-m", "suture", "validate", source],
            cwd=ROOT,
            stdin=endless,
            capture_output=True,
            text=True,
            timeout=60,
        )

    # Then it exits 2 with one line naming the limit: no MemoryError, no traceback
    assert done.returncode == 2
    assert one_line(done.stderr) == (
        f"suture: {source}: more than 2,097,152 bytes (max_input_bytes); nothing past that was read"
    )
