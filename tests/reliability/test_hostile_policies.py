"""Producers name policies; a worker never opens a path that came from a job (issue 23, section 2).

Against a real Redis and real worker processes: the Python API refuses ``policy="/etc/shadow"`` as an
unknown policy, opening nothing and storing nothing; ``suture enqueue --policy FILE`` reads the
user's file on the producer's side (size-capped), stores its content with the job, and the worker
runs it from there (the file is gone by then); a file holding a secret is refused in one line that
names the field and the expected type, and the secret reaches neither that line nor Redis.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

from suture.workers.errors import UnknownPolicy
from suture.workers.producer import enqueue
from tests.fixtures.workers import REPO, CeleryStack

pytestmark = pytest.mark.integration

DOCUMENT = REPO / "examples" / "photosynthesis.md"
SECRET = "sk-live-51Hc0ffeeDeadBeef0123456789abcdef"


def stored(stack: CeleryStack) -> dict[bytes, bytes]:
    """Every string and hash field under the store's prefix, raw, to search for what must not be there."""
    client = redis.Redis.from_url(stack.settings.redis_url or "")
    found: dict[bytes, bytes] = {}
    for key in client.keys("suture:*"):
        kind = client.type(key)
        if kind == b"string":
            found[key] = client.get(key) or b""
        elif kind == b"hash":
            found[key] = b" ".join(v for pair in client.hgetall(key).items() for v in pair)
    return found


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


@pytest.fixture
def producer(celery_stack: Callable[..., CeleryStack]) -> CeleryStack:
    """A Redis and the producers' settings (no worker: nothing may be enqueued anyway)."""
    return celery_stack("http://127.0.0.1:9/v1")


@pytest.mark.parametrize("path", ["/etc/shadow", "/etc/passwd", "../../../../etc/hostname", "/dev/zero"])
def test_the_python_api_refuses_a_path_as_an_unknown_policy_and_stores_nothing(
    producer: CeleryStack, path: str
) -> None:
    # When a web app passes a path as the policy
    with pytest.raises(UnknownPolicy) as raised:
        enqueue("quiz", DOCUMENT.read_text(), policy=path, settings=producer.settings)
    # Then it is an unknown policy, naming the configured ones; nothing is stored
    message = str(raised.value)
    assert "no such policy (configured: default, full-only)" in message and "\n" not in message
    assert "root:" not in message and "No such file" not in message
    assert stored(producer) == {}


@pytest.mark.parametrize(
    "text",
    [
        f"budget_usd: {SECRET}\nsteps: [{{mode: full}}]\n",
        f"steps:\n  - mode: full\n    model: gpt-5-nano\n    target: {SECRET}\n",
        f"{SECRET}: true\nsteps: [{{mode: full}}]\n",
        f"steps: [{{mode: full}}, {{mode: surgical, preserve: [{SECRET}]}}]\n",
        f"steps: [{{mode: full\napi_key: '{SECRET}\n",
    ],
    ids=["value", "step-value", "key", "invariant", "broken-yaml"],
)
def test_a_policy_files_secret_never_reaches_the_error_or_the_store(
    producer: CeleryStack, tmp_path: Path, text: str
) -> None:
    # Given a policy file the user names, holding a secret where a policy value goes
    policy = tmp_path / "leaky.yaml"
    policy.write_text(text, encoding="utf-8")
    # When it is enqueued with the file
    done = producer.cli("enqueue", str(DOCUMENT), "--policy", str(policy))
    # Then one line names the field and the expected type, never the secret; nothing is stored
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert "policy 'leaky'" in line and "field" in line
    assert SECRET not in done.stderr + done.stdout and "sk-live" not in line
    assert stored(producer) == {}


def test_a_policy_file_over_its_size_cap_is_refused_unread(producer: CeleryStack, tmp_path: Path) -> None:
    # Given a 50 MB policy file (sparse: the test does not write 50 MB)
    big = tmp_path / "big.yaml"
    with big.open("wb") as file:
        file.truncate(50 * 1024 * 1024)
    # When it is named, Then it is refused by its size before it is read, naming the setting
    done = producer.cli("enqueue", str(DOCUMENT), "--policy", str(big))
    assert done.returncode == 2
    assert "over max_policy_file_bytes=65,536; it was not read" in one_line(done.stderr)
    assert stored(producer) == {}


def test_the_shadow_file_named_as_a_policy_file_leaks_none_of_its_lines(producer: CeleryStack) -> None:
    # When a user names /etc/shadow as a policy file (read, if at all, by the user's own process)
    done = producer.cli("enqueue", str(DOCUMENT), "--policy", "/etc/shadow")
    # Then it is refused in one line that quotes none of the file's lines
    assert done.returncode == 2
    line = one_line(done.stderr)
    try:
        secrets = [entry for entry in Path("/etc/shadow").read_text().splitlines() if len(entry) > 4]
    except OSError:  # not readable here: then the CLI could not read it either
        secrets = []
    assert not any(entry.split(":")[0] + ":" in line for entry in secrets)
    assert stored(producer) == {}


def test_a_policy_file_travels_with_the_job_and_the_worker_never_opens_it(
    celery_stack: Callable[..., CeleryStack], simulator: Callable[..., str], tmp_path: Path
) -> None:
    # Given a user's policy file: one full attempt with gpt-5-mini
    stack = celery_stack(simulator("perfect"))
    policy = tmp_path / "mine.yaml"
    policy.write_text("max_attempts: 1\nsteps:\n  - {mode: full, model: gpt-5-mini}\n", encoding="utf-8")
    # When the job is enqueued with it, and the file is gone before any worker starts
    done = stack.cli("enqueue", str(DOCUMENT), "--questions", "3", "--policy", str(policy))
    assert done.returncode == 0, done.stderr
    job_id = done.stdout.strip()
    policy.unlink()
    stack.start_worker(concurrency=4)
    # Then the worker ran the file's rules, stored with the job
    result = json.loads(stack.cli("result", job_id, "--timeout", "50").stdout)
    assert result["status"] == "delivered", result["reason"]
    assert [attempt["model"] for attempt in result["attempts"]] == ["gpt-5-mini"]
    spec = json.loads(stack.cli("trace", job_id, "--spec").stdout)["spec"]
    assert spec["policy"] == "mine"
    assert spec["policy_rules"] == {"max_attempts": 1, "steps": [{"mode": "full", "model": "gpt-5-mini"}]}
    # ...and no path of the file is stored anywhere
    assert not any(str(tmp_path).encode() in value for value in stored(stack).values())
