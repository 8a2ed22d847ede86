"""The Celery side of the local stack: the command lines of its workers and Flower, their environment,
and how to tell they are up (a worker answers a ping; Flower answers its health check).
"""

from __future__ import annotations

import os
import socket
import sys
import time
import urllib.request
from collections.abc import Iterable

from celery import Celery

from suture.config.listen_settings import LOOPBACK
from suture.config.settings import Settings
from suture.config.sources import environment
from suture.workers.local.child_process import Child
from suture.workers.local.errors import StackError
from suture.workers.runtime.app import CALLBACK_QUEUE, CONTROL_QUEUE, MODEL_QUEUES

CONTROL_CONCURRENCY = 4
START_TIMEOUT_S = 60.0


def worker_roles(index: int, model_concurrency: int) -> list[tuple[str, list[str]]]:
    """The two workers of pair ``index``: (name, argv) for the model queue and the control (and callbacks)
    queues."""
    roles = []
    for role, queue, concurrency in (
        ("model", ",".join(MODEL_QUEUES), model_concurrency),
        # Callbacks ride with control: the courier delivers them off the task threads.
        ("control", f"{CONTROL_QUEUE},{CALLBACK_QUEUE}", CONTROL_CONCURRENCY),
    ):
        name = f"{role}{index}-{os.getpid()}@{socket.gethostname()}"
        # `suture worker` rather than `celery worker`: the same worker without Celery's CLI (0.3 s less).
        argv = [sys.executable, "-m", "suture", "worker", "-Q", queue]
        argv += ["-P", "threads", "-c", str(concurrency), "-n", name, "--without-mingle", "--without-gossip"]
        roles.append((name, argv))
    return roles


def flower_argv(port: int, host: str = LOOPBACK) -> list[str]:
    """Flower on ``host``:``port`` (``listen.flower_host``, loopback by default) for suture's app."""
    argv = [sys.executable, "-m", "celery", "-A", "suture.workers", "flower", f"--port={port}"]
    return [*argv, f"--address={host}"]


def child_env(settings: Settings) -> dict[str, str]:
    """The environment for worker and Flower subprocesses: this one plus the stack's URLs and settings
    file."""
    env = dict(environment())
    for key, value in (
        ("SUTURE_BROKER_URL", settings.broker_url),
        ("SUTURE_RESULT_BACKEND", settings.result_backend),
        ("SUTURE_REDIS_URL", settings.redis_url),
        ("SUTURE_OPENAI_BASE_URL", settings.openai_base_url),
        ("SUTURE_SENTRY__ENVIRONMENT", settings.sentry.environment),
    ):
        if value:
            env[key] = value
    # Workers must keep the limits, policies and client settings of the command's --config file, not
    # just its URLs (without this, a `batch --config` stack's workers kept no rate limit at all).
    if settings.config_file is not None:
        env["SUTURE_CONFIG"] = str(settings.config_file)
    return env


def wait_for_workers(broker_url: str, names: Iterable[str], children: list[Child]) -> None:
    """Return once every named worker answers a ping; raise StackError if a child dies or time runs out."""
    probe = Celery("suture-stack-probe", broker=broker_url)
    waiting = set(names)
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while waiting and time.monotonic() < deadline:
            for child in children:
                if child.process.poll() is not None:
                    code = child.process.returncode
                    raise StackError(child.name, f"exited with code {code}", child.log_tail())
            for reply in probe.control.ping(destination=sorted(waiting), timeout=0.5, limit=len(waiting)):
                waiting -= set(reply)
    finally:
        probe.close()
    if waiting:
        raise StackError(", ".join(sorted(waiting)), f"no ping reply within {START_TIMEOUT_S:g} s")


def http_answers(url: str) -> bool:
    """True if ``url`` answers 200 within a second."""
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return bool(response.status == 200)
    except OSError:
        return False
