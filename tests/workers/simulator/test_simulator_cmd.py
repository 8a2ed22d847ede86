"""``suture simulator`` as a user runs it: labelled, URL first on stdout, clean stop on SIGTERM,
configured."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest


@pytest.fixture
def simulator_process() -> Iterator[subprocess.Popen[str]]:
    """``suture simulator --port 0 --latency-scale 0`` in a child process, stopped at teardown."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "suture",
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
        [sys.executable, "-m", "suture", "simulator", "--help"], capture_output=True, text=True, timeout=30
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
        (["--limit", "gpt-5-nano=fast"], "--limit"),
        (["--limit", "gpt-5-nano=0/10"], "rpm must be at least 1"),
        (["--batch-delay-s", "-1"], "--batch-delay-s"),
        (["--batch-expire-rate", "1.5"], "--batch-expire-rate"),
        (["--batch-line-error-rate", "nan"], "--batch-line-error-rate"),
    ],
)
def test_unusable_options_exit_2_with_one_line(argv: list[str], message: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "suture", "simulator", *argv], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def _start(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "suture", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
    )


def _clean_env(**variables: str) -> dict[str, str]:
    """This process's environment without any SUTURE_* variable, plus ``variables``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}
    return {**env, **variables}


def _outcome(url: str) -> str:
    """What one quiz request gets: the HTTP status, or "empty" / "quiz" for a 200 reply."""
    body = {
        "model": "gpt-5-nano",
        "messages": [
            {"role": "user", "content": "Write exactly 1 questions.\n<document>\nPlants grow.\n</document>"}
        ],
    }
    response = httpx2.post(f"{url}/chat/completions", json=body, timeout=10)
    if response.status_code != 200:
        return str(response.status_code)
    return "empty" if response.json()["choices"][0]["message"]["content"] == "" else "quiz"


# Each layer turns one fault to 1.0 and the layer below it's off; the fault seen shows which layer won.
_YAML = "simulator:\n  faults:\n    server_error: 1.0\n"
_ENV = {"SUTURE_SIMULATOR__FAULTS__SERVER_ERROR": "0", "SUTURE_SIMULATOR__FAULTS__RATE_LIMITED": "1.0"}
_CLI = ["--fault", "rate_limited=0", "--fault", "empty=1"]


@pytest.mark.parametrize(
    ("use_yaml", "use_env", "use_cli", "expected"),
    [
        (False, False, False, "quiz"),  # packaged defaults: the realistic profile has no faults
        (True, False, False, "500"),
        (True, True, False, "429"),
        (True, True, True, "empty"),
        (False, False, True, "empty"),
    ],
)
def test_fault_shares_follow_cli_over_env_over_yaml_over_defaults(
    tmp_path: Path, use_yaml: bool, use_env: bool, use_cli: bool, expected: str
) -> None:
    # Given fault shares set in some of the layers
    config = tmp_path / "suture.yaml"
    if use_yaml:
        config.write_text(_YAML)
    env = _clean_env(**(_ENV if use_env else {}))
    argv = ["simulator", "--port", "0", "--latency-scale", "0", *(_CLI if use_cli else [])]
    # When `suture simulator` starts and gets a request
    process = _start(argv, env, tmp_path)
    try:
        assert process.stdout is not None
        outcome = _outcome(process.stdout.readline().strip())
    finally:
        process.kill()
        process.communicate(timeout=10)
    # Then the highest layer that set a share decided the reply
    assert outcome == expected


@pytest.mark.parametrize(
    ("yaml_text", "env", "argv", "message"),
    [
        ("", {"SUTURE_SIMULATOR__FAULTS__EMPTY": "1.5"}, [], "invalid configuration"),
        ("simulator:\n  faults:\n    meteor: 0.1\n", {}, [], "invalid configuration"),
        ("", {"SUTURE_SIMULATOR__FAULTS__EMPTY": "0.9"}, ["--fault", "refusal=0.9"], "more than 1"),
        ("simulator:\n  profile: chaos\n  faults:\n    empty: 0.9\n", {}, [], "more than 1"),
    ],
    ids=["env-over-1", "yaml-unknown-fault", "env-plus-cli-over-1", "yaml-plus-profile-over-1"],
)
def test_unusable_configured_fault_shares_exit_2_with_one_line(
    tmp_path: Path, yaml_text: str, env: dict[str, str], argv: list[str], message: str
) -> None:
    (tmp_path / "suture.yaml").write_text(yaml_text)
    result = subprocess.run(
        [sys.executable, "-m", "suture", "simulator", "--port", "0", *argv],
        capture_output=True,
        text=True,
        timeout=30,
        env=_clean_env(SUTURE_CONFIG=str(tmp_path / "suture.yaml"), **env),  # named: no notice line
        cwd=tmp_path,
    )
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_limit_and_batch_flags_reach_the_running_server(tmp_path: Path) -> None:
    # Given `suture simulator` with one request a minute for gpt-5-nano and instant batches
    argv = [
        "simulator",
        "--port",
        "0",
        "--latency-scale",
        "0",
        "--limit",
        "gpt-5-nano=1/",
        "--batch-delay-s",
        "0",
    ]
    process = _start(argv, _clean_env(), tmp_path)
    try:
        assert process.stdout is not None and process.stderr is not None
        url = process.stdout.readline().strip()
        notice = process.stderr.readline()
        # When two requests arrive
        outcomes = [_outcome(url), _outcome(url)]
        stats = httpx2.get(f"{url}/_stats", timeout=10).json()
    finally:
        process.kill()
        process.communicate(timeout=10)
    # Then the second is over the limit, the notice names the limit, and the stats count it
    assert outcomes == ["quiz", "429"]
    assert "limit=gpt-5-nano:1/-" in notice
    assert (stats["requests"], stats["rate_limited"]) == (2, 1)
