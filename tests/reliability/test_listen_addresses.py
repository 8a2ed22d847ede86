"""Every listener suture starts binds loopback unless a setting opens it, and prints where it really is.

The attack (issue 33): under `suture up` the workers' metrics listened on 0.0.0.0 without
authentication (``metrics.serve`` defaulted ``host="0.0.0.0"``) while the printed URLs said
127.0.0.1. Each test runs the real command and reads the sockets its processes listen on from
/proc/net/tcp, then compares them with the lines it printed.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.fixtures.processes import listening, process_tree, wait_for_children
from tests.fixtures.receivers import WEBHOOK_SECRET
from tests.fixtures.workers import CeleryStack
from tests.workers.local.test_stack import read_ready_lines, up_env

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
URL = re.compile(r"http://(\[[0-9a-f:]+\]|[0-9.]+):(\d+)")


def printed(text: str) -> set[tuple[str, int]]:
    """The (address, port) of every http:// URL in ``text``."""
    return {(host.strip("[]"), int(port)) for host, port in URL.findall(text)}


@contextmanager
def running(argv: list[str], env: dict[str, str], cwd: Path = ROOT) -> Iterator[subprocess.Popen[str]]:
    """A suture command until the block ends; then interrupted (and killed if it lingers)."""
    with subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        try:
            yield process
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
                try:
                    process.communicate(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.communicate(timeout=10)


def settled(pids: Callable[[], list[int]], expected: int, timeout_s: float = 30.0) -> set[tuple[str, int]]:
    """The listening addresses of ``pids()`` once there are ``expected`` of them (or the timeout)."""
    deadline = time.monotonic() + timeout_s
    found: set[tuple[str, int]] = set()
    while time.monotonic() < deadline:
        found = listening(pids())
        if len(found) >= expected:
            return found
        time.sleep(0.2)
    return found


@pytest.mark.parametrize("opened", [False, True], ids=["defaults", "metrics-opened"])
def test_suture_up_listens_on_loopback_unless_a_setting_opens_it_and_prints_the_real_address(
    redis_url: str, tmp_path: Path, opened: bool
) -> None:
    # Given `suture up --flower` with the defaults, or with listen.metrics_host opened to the network
    env = up_env(tmp_path, redis_url) | ({"SUTURE_LISTEN__METRICS_HOST": "0.0.0.0"} if opened else {})
    with running([sys.executable, "-m", "suture", "up", "--flower"], env) as up:
        # When it is ready
        urls = read_ready_lines(up)
        wait_for_children(up.pid, 3)
        shown = printed(" ".join(urls[name] for name in ("model", "metrics", "flower")))
        sockets = settled(lambda: process_tree(up.pid), len(shown))
    # Then its processes listen exactly where its lines say: the simulator, two workers' metrics, Flower
    assert len(shown) == 4 and sockets == shown
    metrics = printed(urls["metrics"])
    others = shown - metrics
    # ...all on 127.0.0.1, except the metrics when (and only when) listen.metrics_host opens them
    assert {host for host, _ in others} == {"127.0.0.1"}
    assert {host for host, _ in metrics} == ({"0.0.0.0"} if opened else {"127.0.0.1"})


@pytest.mark.parametrize("opened", [False, True], ids=["defaults", "opened"])
def test_the_simulator_listens_on_loopback_unless_a_setting_opens_it(tmp_path: Path, opened: bool) -> None:
    # Given `suture simulator`, with the defaults or listen.simulator_host opened
    env = up_env(tmp_path) | ({"SUTURE_LISTEN__SIMULATOR_HOST": "0.0.0.0"} if opened else {})
    with running([sys.executable, "-m", "suture", "simulator", "--port", "0"], env) as simulator:
        assert simulator.stdout is not None
        first = simulator.stdout.readline()
        shown = printed(first)
        sockets = settled(lambda: [simulator.pid], 1)
    # Then it listens where its first line says, on loopback unless opened
    assert len(shown) == 1 and sockets == shown
    assert {host for host, _ in shown} == ({"0.0.0.0"} if opened else {"127.0.0.1"})


def test_serve_listens_on_api_host_loopback_by_default_and_prints_the_bound_address(
    celery_stack: Callable[..., CeleryStack], tmp_path: Path
) -> None:
    # Given `suture serve` with no --host (api.host's default), and one given the name "localhost"
    stack = celery_stack("http://127.0.0.1:9/v1")
    env = stack.env | {"SUTURE_API__KEYS": '["k"]', "SUTURE_WEBHOOK__SECRET": WEBHOOK_SECRET}
    for extra in ([], ["--host", "localhost"]):
        first, sockets = _serve_once(env, tmp_path, extra)
        # Then each listens on 127.0.0.1, and its first line gives that address, not the name it was given
        shown = printed(first)
        assert len(shown) == 1 and sockets == shown and {h for h, _ in shown} == {"127.0.0.1"}, first


def _serve_once(env: dict[str, str], cwd: Path, extra: list[str]) -> tuple[str, set[tuple[str, int]]]:
    argv = [sys.executable, "-m", "suture", "serve", "--port", "0", *extra]
    with running(argv, env, cwd) as serve:
        assert serve.stdout is not None
        first = serve.stdout.readline()
        return first, settled(lambda: [serve.pid], 1)


def test_review_listens_on_loopback_and_prints_where(tmp_path: Path) -> None:
    # Given `suture review` over a batch's output folder (regenerations on the simulator, in-process)
    out = tmp_path / "out"
    out.mkdir()
    (out / "quizzes.jsonl").write_text("")
    (out / "ledger.jsonl").write_text("")
    env = {k: v for k, v in up_env(tmp_path).items() if k != "XDG_RUNTIME_DIR"}
    with running([sys.executable, "-m", "suture", "review", str(out)], env, tmp_path) as review:
        assert review.stdout is not None
        first = review.stdout.readline()
        sockets = settled(lambda: [review.pid], 2)
        review.send_signal(signal.SIGINT)
        _, err = review.communicate(timeout=20)
    # Then the review app and its simulator listen on 127.0.0.1 only, each where a printed line says
    assert first.startswith("http://127.0.0.1:")
    assert sockets and {host for host, _ in sockets} == {"127.0.0.1"}
    assert sockets == printed(first + err), (first, err)
