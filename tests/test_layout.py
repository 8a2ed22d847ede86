"""The package layout the house agreed on: one import name, and pure layers a web app can import.

These read the source tree (and, for the import rules, what a fresh interpreter really loads), so a
newcomer's map of the code in README.md and docs/architecture.md stays true. Which layer may import
which is import-linter's to check (`make check`, contracts in pyproject.toml); module and function
sizes are a reading guide that `make check` reports (tools/sizes.py) and never a test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("config", "contracts", "tasks", "workers", "suture")


def test_the_installed_names_are_one_package() -> None:
    # Given the package root
    root = ROOT / "suture"

    # Then each of the four folders of the layout is linked into it, and nothing else is
    links = {path.name: path.readlink().as_posix() for path in root.iterdir() if path.is_symlink()}
    assert links == {name: f"../{name}" for name in ("config", "contracts", "tasks", "workers")}


_PROBE = """
import json, sys
before = set(sys.modules)
import {module}
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def _loaded_by(module: str) -> list[str]:
    code = _PROBE.format(module=module)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def test_import_suture_starts_nothing() -> None:
    # When a web app imports the public package
    loaded = _loaded_by("suture")

    # Then no worker machinery, broker client or model SDK is loaded yet
    assert not [name for name in loaded if name.split(".")[0] in {"celery", "kombu", "redis", "openai"}]


_WEB_APP = """
import json, sys
import suture
from suture import enqueue, InvalidJob
handle = enqueue("quiz", "Mitochondria make ATP; ribosomes make proteins. " * 4, questions=2)
try:
    enqueue("quiz", "%PDF-1.3 binary", questions=2)
except InvalidJob as exc:
    refused = str(exc)
from kombu.transport import redis as kombu_redis
print(json.dumps({
    "loaded": sorted(sys.modules),
    "id": handle.id,
    "refused": refused,
    "kombu_patched": kombu_redis.Channel._connparams.__module__ != "kombu.transport.redis",
}))
"""
# What a web app that only enqueues must not load: the worker side of suture, the model SDK, the simulator.
WORKER_MACHINERY = (
    "suture.workers.runtime.tasks",
    "suture.workers.runtime.kombu_patches",
    "suture.workers.flow",
    "suture.workers.model.client",
    "suture.workers.simulator",
    "suture.workers.local.stack",
    "suture.workers.local.celery_processes",
    "suture.workers.cli",
    "openai",
    "httpx2",
    "aiohttp",
)


def test_a_web_app_that_enqueues_loads_no_worker_machinery(redis_factory: Any) -> None:
    # Given a Redis, and a web app's interpreter configured for it
    url = redis_factory().url
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_"))}
    env |= {"SUTURE_REDIS_URL": url, "SUTURE_BROKER_URL": url}

    # When it imports suture, enqueues a job and has a bad one refused
    done = subprocess.run(
        [sys.executable, "-c", _WEB_APP], capture_output=True, text=True, timeout=60, cwd=ROOT, env=env
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)

    # Then the job is stored, the refusal is the API's one error, and no worker machinery came along
    assert len(report["id"]) == 32 and "file_format" in report["refused"]
    loaded = [m for m in report["loaded"] if m.startswith(WORKER_MACHINERY)]
    assert loaded == [], f"a web app that only enqueues loaded {loaded}"
    assert report["kombu_patched"] is False


# Where code outside config/ may touch os.environ, and why: each hands the environment to a child
# process it starts (the child reads it back through config/), or is a library's own variable.
ENVIRONMENT_HANDOFFS = {
    "workers/runtime/metrics.py": "PROMETHEUS_MULTIPROC_DIR, prometheus_client's own, shared with the "
    "children",
    "workers/cli/serve_cmd.py": "the settings handed to `serve --workers N`'s server processes",
    "workers/cli/worker_cmd.py": "--metrics-port handed to the Celery worker's pool processes",
    "workers/local/discovery.py": "a worker that found `suture up` hands its URLs to its tasks' settings and "
    "pool processes",
}


def test_the_environment_is_read_only_in_config() -> None:
    # Given every module of the package outside config/
    modules = [
        path
        for package in ("contracts", "tasks", "workers", "suture")
        if not (ROOT / package).is_symlink()
        for path in sorted((ROOT / package).rglob("*.py"))
    ]

    # Then none reads the environment itself, but the hand-offs to child processes named above
    readers = [
        path.relative_to(ROOT).as_posix()
        for path in modules
        if "os.environ" in (text := path.read_text(encoding="utf-8")) or "os.getenv" in text
    ]
    assert sorted(set(readers) - set(ENVIRONMENT_HANDOFFS)) == []
