"""``suture config show``: every setting with its source (cli > env > yaml > default), secrets masked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SECRET_KEY = "sk-test-VERYSECRET-0123456789"
REDIS_PASSWORD = "redis-pw-SECRET-42"


def config_show(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "suture", *args],
        cwd=tmp_path,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def user_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text("max_retries: 3\nclient:\n  timeout_s: 45\nstore_prompts: false\n")
    return path


def test_each_value_names_its_source_and_precedence_holds(tmp_path: Path, user_yaml: Path) -> None:
    # Given a value set at every layer (client.timeout_s in YAML and ENV; max_retries in YAML and CLI)
    env = {"SUTURE_CLIENT__TIMEOUT_S": "30", "PYTHONPATH": str(Path.cwd())}
    # When the effective settings are shown
    done = config_show(
        tmp_path, "--config", str(user_yaml), "config", "show", "--json", "--set", "max_retries=5", env=env
    )
    # Then the highest layer wins and is named
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert rows["max_retries"] == {"value": 5, "source": "cli"}
    assert rows["client.timeout_s"] == {"value": 30.0, "source": "env"}
    assert rows["store_prompts"] == {"value": False, "source": "yaml"}
    assert rows["client.transport_max_retries"] == {"value": 4, "source": "default"}


def test_secrets_are_masked(tmp_path: Path) -> None:
    env = {
        "OPENAI_API_KEY": SECRET_KEY,
        "SUTURE_REDIS_URL": f"redis://:{REDIS_PASSWORD}@127.0.0.1:6379/0",
        "PYTHONPATH": str(Path.cwd()),
    }
    done = config_show(tmp_path, "config", "show", env=env)
    assert done.returncode == 0, done.stderr
    assert SECRET_KEY not in done.stdout + done.stderr
    assert REDIS_PASSWORD not in done.stdout + done.stderr
    assert "redis://:***@127.0.0.1:6379/0" in done.stdout
    assert "openai_api_key" in done.stdout and "(env)" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["config", "show", "--set", "max_retries=9"], "invalid configuration"),
        (["config", "show", "--set", "novalue"], "--set expects KEY=VALUE"),
        (["--config", "missing.yaml", "config", "show"], "config file not found"),
    ],
)
def test_unusable_configuration_exits_2_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    done = config_show(tmp_path, *args, env={"PYTHONPATH": str(Path.cwd())})
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_teaching_knobs_and_auto_question_bounds_are_shown(tmp_path: Path) -> None:
    # Given the quiz's kinds and language set in the environment
    env = {"SUTURE_QUIZ__QUESTION_KINDS": '["multiple","true_false"]', "SUTURE_QUIZ__LANGUAGE": "fr"}
    done = config_show(tmp_path, "config", "show", "--json", env=env | {"PYTHONPATH": str(Path.cwd())})
    # Then config show lists them, with the other knobs and batch.auto_questions at their defaults
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert rows["quiz.question_kinds"] == {"value": ["multiple", "true_false"], "source": "env"}
    assert rows["quiz.language"] == {"value": "fr", "source": "env"}
    assert rows["quiz.difficulty"] == {"value": None, "source": "default"}
    assert rows["quiz.audience"] == {"value": None, "source": "default"}
    assert rows["batch.auto_questions.chars_per_question"] == {"value": 300, "source": "default"}
