"""Prometheus metrics: per-worker series that Prometheus sums, plus the cluster's queue and job gauges.

Each worker process counts what it did (jobs finished, attempts, tokens, cost, job seconds, model
calls in flight) with ``prometheus_client`` and serves them on ``worker.metrics_port``
(``suture worker --metrics-port N``). A prefork worker's children write to a
``PROMETHEUS_MULTIPROC_DIR`` the parent serves summed (``prometheus_client``'s multiprocess mode);
a threads or solo worker is one process with the plain registry. A restarted worker starts its
counters at 0 and Prometheus' ``rate()``/``increase()`` treat that as a counter reset, so
``sum(increase(...))`` over all workers survives restarts. ``suture_queue_messages`` and
``suture_jobs_unfinished`` are read from the broker and the store at scrape time: every endpoint
shows the same cluster-wide value (aggregate them with ``max``). ``render()`` gives the text for
``suture serve``'s ``/metrics``: that process's own series and the cluster gauges.

A model call that must wait for its budget (``limits``) or after a 429 is deferred, not slept on
(``suture.workers.runtime.deferral``): ``suture_model_calls_deferred_total`` counts those and
``suture_model_deferred_seconds_total`` the waits. ``prime`` creates every series whose labels are
known at start at 0 (``known_labels``). ``prometheus_client`` is imported only when a metric is first used, so
a
prefork worker can choose multiprocess mode before any metric exists.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from suture.config.listen_settings import http_url
from suture.config.settings import Settings

log = logging.getLogger(__name__)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
TOKEN_KINDS = {"input": "input_tokens", "cached": "cached_input_tokens", "output": "output_tokens"}
TOKEN_KINDS |= {"reasoning": "reasoning_tokens"}
JOB_SECONDS_BUCKETS = (1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
_lock = threading.Lock()
_making = threading.Lock()
_made: list[Metrics] = []
_exposed: list[Any] = []


@dataclass(frozen=True)
class Metrics:
    """suture's metric objects in this process (created on first use)."""

    jobs_finished: Any
    attempts: Any
    tokens: Any
    cost_usd: Any
    job_seconds: Any
    calls_in_flight: Any
    callbacks_given_up: Any
    calls_deferred: Any
    deferred_seconds: Any


def metrics() -> Metrics:
    """This process's metrics, created once (in multiprocess mode if the worker chose it).

    Under a lock: threads asking at once would otherwise each create them, and prometheus_client
    refuses a second registration of a name (``Duplicated timeseries``).
    """
    if not _made:
        with _making:
            if not _made:
                _made.append(_new_metrics())
    return _made[0]


def _new_metrics() -> Metrics:
    from prometheus_client import Counter, Gauge, Histogram

    return Metrics(
        jobs_finished=Counter(
            "suture_jobs_finished", "Jobs that ended, by how", ["contract", "status", "cause", "priority"]
        ),
        attempts=Counter(
            "suture_attempts",
            "Attempts applied to jobs (late ones too)",
            ["contract", "mode", "model", "outcome"],
        ),
        tokens=Counter(
            "suture_model_tokens",
            "Model tokens of applied attempts (input includes cached)",
            ["model", "kind"],
        ),
        cost_usd=Counter("suture_model_cost_usd", "Known model cost of applied attempts, USD", ["model"]),
        job_seconds=Histogram(
            "suture_job_seconds",
            "Seconds from a job's start (or resume) to its end",
            ["contract", "status", "priority"],
            buckets=JOB_SECONDS_BUCKETS,
        ),
        calls_in_flight=Gauge(
            "suture_model_calls_in_flight", "Model calls in flight", ["model"], multiprocess_mode="livesum"
        ),
        callbacks_given_up=Counter(
            "suture_callbacks_given_up",
            "Callbacks given up: attempts ran out, or the target was refused at delivery",
            ["reason"],
        ),
        calls_deferred=Counter(
            "suture_model_calls_deferred",
            "Model calls deferred: their model's budget (limits) was spent, or the provider answered 429",
            ["model", "reason"],
        ),
        deferred_seconds=Counter(
            "suture_model_deferred_seconds",
            "Seconds model calls were deferred for (the countdowns of their re-published tasks)",
            ["model", "reason"],
        ),
    )


def prime(settings: Settings) -> None:
    """Create every counter series whose labels are known now, at 0 (``known_labels``): an alert on
    ``increase()`` then sees the first job failing for each cause, not only the second."""
    from suture.workers.runtime import known_labels as known

    m = metrics()
    contracts, priorities, models = known.contracts(), known.priorities(), known.models(settings)
    for contract in contracts:
        for status, cause in known.endings():
            for priority in priorities:
                m.jobs_finished.labels(contract, status, cause, priority)
        for mode in known.modes():
            for model in models:
                for outcome in known.outcomes():
                    m.attempts.labels(contract, mode, model, outcome)
    for model in models:
        m.cost_usd.labels(model)
        for reason in known.DEFERRAL_REASONS:
            m.calls_deferred.labels(model, reason)
            m.deferred_seconds.labels(model, reason)
        for kind in TOKEN_KINDS:
            m.tokens.labels(model, kind)
    for reason in known.GIVEN_UP_REASONS:
        m.callbacks_given_up.labels(reason)


def call_deferred(model: str, reason: str, wait_s: float) -> None:
    """Count one deferred model call (``budget`` or ``provider_429``) and the seconds it waits."""
    m = metrics()
    m.calls_deferred.labels(model, reason).inc()
    m.deferred_seconds.labels(model, reason).inc(max(0.0, wait_s))


def callback_given_up(reason: str) -> None:
    """Count one callback given up (``attempts`` or ``refused``)."""
    metrics().callbacks_given_up.labels(reason).inc()


def attempt_done(contract: str, attempt: dict[str, Any]) -> None:
    """Count one applied attempt (result-schema form): its outcome, tokens and cost."""
    m = metrics()
    model = str(attempt.get("model"))
    m.attempts.labels(contract, str(attempt.get("mode")), model, str(attempt.get("outcome"))).inc()
    usage = attempt.get("usage") or {}
    for kind, key in TOKEN_KINDS.items():
        if usage.get(key):
            m.tokens.labels(model, kind).inc(int(usage[key]))
    if attempt.get("cost_usd"):
        m.cost_usd.labels(model).inc(float(attempt["cost_usd"]))


def job_ended(
    contract: str, result: dict[str, Any], seconds: float | None, priority: str = "interactive"
) -> None:
    """Count one job that ended (by its priority class too), and how long it took end to end."""
    m = metrics()
    status = str(result.get("status"))
    m.jobs_finished.labels(contract, status, str(result.get("cause") or "none"), priority).inc()
    if seconds is not None and seconds >= 0:
        m.job_seconds.labels(contract, status, priority).observe(seconds)


@contextmanager
def call_in_flight(model: str) -> Iterator[None]:
    """Count a model call as in flight while the block runs."""
    gauge = metrics().calls_in_flight.labels(model)
    gauge.inc()
    try:
        yield
    finally:
        gauge.dec()


def use_multiprocess_mode() -> str | None:
    """Make this (prefork parent) process and its children count in a fresh multiprocess directory.

    Must run before any suture metric exists; returns the directory (None if metrics exist already).
    ``prometheus_client`` picks its value class when imported, and the ``celery`` command imports it
    early (through Flower's command plugin), so the choice is made again here, as it would have been
    with ``PROMETHEUS_MULTIPROC_DIR`` set before start (which also works).
    """
    if _made:
        return os.environ.get(MULTIPROC_ENV)
    directory = os.environ.get(MULTIPROC_ENV) or tempfile.mkdtemp(prefix="suture-metrics-")
    os.environ[MULTIPROC_ENV] = directory
    if "prometheus_client.values" in sys.modules:
        from prometheus_client import values

        values.ValueClass = values.get_value_class()
    return directory


def child_exited(pid: int) -> None:
    """Drop a prefork child's live gauges (its counters stay in the sum)."""
    if os.environ.get(MULTIPROC_ENV):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)


def remove_multiprocess_dir() -> None:
    """Remove this worker's multiprocess directory at shutdown."""
    directory = os.environ.get(MULTIPROC_ENV)
    if directory and os.path.basename(directory).startswith("suture-metrics-"):
        shutil.rmtree(directory, ignore_errors=True)


def registry(settings: Settings) -> Any:
    """The registry to expose (one per process): this process, or its prefork children summed, and the
    cluster gauges read with ``settings``."""
    from prometheus_client import REGISTRY, CollectorRegistry, multiprocess

    from suture.workers.runtime.cluster_gauges import ClusterGauges

    with _lock:
        if _exposed:
            return _exposed[0]
        prime(
            settings
        )  # every known series at 0 from the first scrape (in multiprocess mode: this process's)
        if os.environ.get(MULTIPROC_ENV):
            exposed = CollectorRegistry()
            multiprocess.MultiProcessCollector(exposed)
        else:
            exposed = REGISTRY
        exposed.register(ClusterGauges(settings))
        _exposed.append(exposed)
        return exposed


def serve(settings: Settings, port: int) -> Any:
    """Serve ``/metrics`` on ``listen.metrics_host``:``port`` (0: a free one) in a thread; returns the server.

    Loopback unless ``listen.metrics_host`` says otherwise: the endpoint has no authentication.
    """
    from prometheus_client import start_http_server

    host = settings.listen.metrics_host
    server, _thread = start_http_server(port, addr=host, registry=registry(settings))
    log.info("metrics on %s", http_url(str(server.server_address[0]), server.server_port, "/metrics"))
    return server


def render(settings: Settings) -> tuple[bytes, str]:
    """The metrics text and its content type, for an HTTP API (``suture serve``) to answer ``/metrics`` with.

    Per process: this process's own series (e.g. the jobs it cancelled) plus the cluster-wide gauges;
    the workers' counters are on their own endpoints (see the module docstring).
    """
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    return generate_latest(registry(settings)), CONTENT_TYPE_LATEST
