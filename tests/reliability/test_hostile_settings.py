"""Settings a directory cannot turn against its user, and credentials masked everywhere (issue 23, section 6).

Real processes: `suture generate --inline` in a folder whose ./suture.yaml points the model at
another host on loopback (a simulator that checks the key, standing in for someone else's server),
`suture config show` and a job command with passwords in URLs of both forms, and a real Celery worker
whose result backend carries its password as ``?password=``.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx2

ROOT = Path(__file__).resolve().parents[2]
LESSON = "Photosynthesis turns light energy into chemical energy stored in sugar molecules. " * 8


def run_suture(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "suture", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def clean_env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SUTURE_", "OPENAI_", "SENTRY_", "REDIS_URL"))
    }
    return env | extra


def requests_seen(base_url: str, key: str) -> int:
    return int(
        httpx2.get(f"{base_url}/_stats", headers={"Authorization": f"Bearer {key}"}, timeout=10).json()[
            "requests"
        ]
    )


def test_a_working_directory_file_cannot_send_the_environments_key_elsewhere(
    simulator: Callable[..., str], tmp_path: Path
) -> None:
    # Given the user's key in the environment, and a folder whose suture.yaml points the model elsewhere
    key = f"sk-canary-{secrets.token_hex(8)}"
    elsewhere = simulator("perfect", latency_scale=0.0, api_key=key)
    (tmp_path / "suture.yaml").write_text(f"openai_base_url: {elsewhere}\n")
    (tmp_path / "lesson.txt").write_text(LESSON)

    # When `suture generate --inline` runs there
    done = run_suture(
        "generate",
        "lesson.txt",
        "--inline",
        "--questions",
        "3",
        cwd=tmp_path,
        env=clean_env(OPENAI_API_KEY=key),
    )

    # Then it is refused with one line saying why, and the other host received nothing
    assert done.returncode == 2
    line = done.stderr.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line, done.stderr
    assert "suture.yaml (found in the working directory) sets openai_base_url" in line
    assert "--config" in line and key not in line
    assert requests_seen(elsewhere, key) == 0

    # ...while the same file named with --config is the user's choice: it is used, and said so nowhere
    chosen = run_suture(
        "--config",
        "suture.yaml",
        "generate",
        "lesson.txt",
        "--inline",
        "--questions",
        "3",
        cwd=tmp_path,
        env=clean_env(OPENAI_API_KEY=key),
    )
    assert chosen.returncode == 0, chosen.stderr
    assert requests_seen(elsewhere, key) > 0
    assert "found in the working directory" not in chosen.stderr


def test_a_working_directory_file_is_named_on_stderr_when_used(tmp_path: Path) -> None:
    # Given a folder with a suture.yaml that changes a threshold (no endpoint)
    (tmp_path / "suture.yaml").write_text("quiz:\n  options_per_question: 3\n")

    # When a command loads the settings there
    done = run_suture("config", "show", "--json", cwd=tmp_path, env=clean_env())

    # Then stderr names the file it used, once; stdout shows its value came from it
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"suture: using settings from {tmp_path.resolve() / 'suture.yaml'} (found in the working directory; "
        "--config or SUTURE_CONFIG names another)"
    ]
    assert json.loads(done.stdout)["quiz.options_per_question"] == {"value": 3, "source": "yaml"}


def test_passwords_in_urls_of_any_form_are_masked_in_config_show_and_in_errors(tmp_path: Path) -> None:
    # Given broker and store URLs holding passwords as user info and as ?password= (nothing listens there)
    first, second = f"pw{secrets.token_hex(8)}", f"pw{secrets.token_hex(8)}"
    env = clean_env(
        SUTURE_BROKER_URL=f"redis://:{first}@127.0.0.1:9/0",
        SUTURE_REDIS_URL=f"redis://127.0.0.1:9/0?password={second}&socket_timeout=1",
        SUTURE_RESULT_BACKEND=f"redis://user:{first}@127.0.0.1:9/1",
    )

    # When the settings are shown, and a job command fails to reach the store
    shown = run_suture("config", "show", cwd=tmp_path, env=env)
    status = run_suture("status", "0" * 32, cwd=tmp_path, env=env)

    # Then neither password appears; the URLs are shown with *** in their place
    for done in (shown, status):
        assert first not in done.stdout + done.stderr and second not in done.stdout + done.stderr
    assert "redis://:***@127.0.0.1:9/0" in shown.stdout
    assert "password=***" in shown.stdout and "redis://user:***@127.0.0.1:9/1" in shown.stdout
    assert status.returncode == 2 and len(status.stderr.strip().splitlines()) == 1, status.stderr


def test_a_workers_banner_and_log_never_show_a_query_password(
    password_redis: Callable[[str], str], tmp_path: Path
) -> None:
    # Given a Redis that wants a password, given to the result backend and store as ?password=
    password = f"canarypw{secrets.token_hex(8)}"
    with_userinfo = password_redis(password)
    plain = with_userinfo.replace(f":{password}@", "")
    env = clean_env(
        SUTURE_BROKER_URL=with_userinfo,
        SUTURE_RESULT_BACKEND=f"{plain[:-2]}/1?password={password}",
        SUTURE_REDIS_URL=f"{plain}?password={password}",
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",
        PYTHONPATH=str(ROOT),
    )
    log = tmp_path / "worker.out"

    # When a worker starts and runs until it is ready
    argv = [sys.executable, "-m", "suture", "worker", "-c", "2", "-n", f"w{os.getpid()}@test"]
    with log.open("w") as out:
        process = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while " ready." not in log.read_text() and time.monotonic() < deadline and process.poll() is None:
                time.sleep(0.2)
        finally:
            process.terminate()
            process.wait(timeout=30)

    # Then its banner named the result backend, and nothing it printed or logged shows the password
    text = log.read_text()
    assert " ready." in text, text[-2000:]
    assert "results:" in text and "transport:   redis://:***@" in text, text[:3000]
    assert password not in text


def test_the_log_filter_masks_credentials_a_record_carries() -> None:
    # Given the filter a worker puts on its log handlers, with one configured secret
    import logging

    from suture.workers.runtime.log_redaction import RedactingFilter

    record = logging.LogRecord(
        "celery",
        logging.ERROR,
        __file__,
        1,
        "cannot reach %s (key %s)",
        ("redis://h:6379/0?password=hunter2&db=1", "sk-secret"),
        None,
    )

    # When a record with a query password and the secret passes through it
    assert RedactingFilter(["sk-secret"]).filter(record)

    # Then both are masked in the message the handler formats
    assert record.getMessage() == "cannot reach redis://h:6379/0?password=***&db=1 (key ***)"
