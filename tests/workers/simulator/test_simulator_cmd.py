"""``suture simulator`` as a user runs it: labelled, URL first on stdout, clean stop on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator

import httpx2
import pytest


@pytest.fixture
def simulator_process() -> Iterator[subprocess.Popen[str]]:
    """``suture simulator --port 0 --latency-scale 0`` in a child process, stopped at teardown."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "workers",
            "simulator",
            "--port",
            "0",
            "--latency-scale",
            "0",
            "--profile",
            "perfect",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    yield process
    if process.poll() is None:
        process.kill()
    process.communicate(timeout=10)


def test_help_says_it_is_a_simulation() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "workers", "simulator", "--help"], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0
    assert "SIMULATED" in result.stdout and "not a real model" in result.stdout


def test_prints_its_url_first_serves_and_stops_on_sigterm(simulator_process: subprocess.Popen[str]) -> None:
    # Given the simulator started on a free port
    assert simulator_process.stdout is not None and simulator_process.stderr is not None
    url = simulator_process.stdout.readline().strip()
    notice = simulator_process.stderr.readline()
    # When a client lists its models
    models = httpx2.get(f"{url}/models", timeout=10).json()
    # Then the URL was the first line, the notice says simulation, and SIGTERM stops it cleanly
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    assert "SIMULATED" in notice
    assert {m["owned_by"] for m in models["data"]} == {"suture-simulator"}
    simulator_process.send_signal(signal.SIGTERM)
    assert simulator_process.wait(timeout=10) == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--latency-scale", "-1"], "--latency-scale"),
        (["--fault", "meteor=0.5"], "--fault"),
        (["--fault", "empty=0.9", "--fault", "refusal=0.9"], "more than 1"),
        (["--require-key-env", "SUTURE_TEST_UNSET_VARIABLE"], "not set"),
    ],
)
def test_unusable_options_exit_2_with_one_line(argv: list[str], message: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "workers", "simulator", *argv], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
