"""Prometheus metrics scraped from real workers after a batch, parsed with prometheus_client, match
report.json."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.request
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from suture.workers.local.child_process import free_port
from suture.workers.runtime.app import MODEL_QUEUES
from tests.fixtures.workers import CeleryStack

ROOT = Path(__file__).resolve().parents[3]
STATUSES = ("delivered", "soft_delivered", "failed", "refused", "cancelled")
TOKEN_KINDS = {"input": "input_tokens", "cached": "cached_input_tokens", "output": "output_tokens"}

Samples = list[tuple[str, dict[str, str], float]]


def scrape(port: int) -> Samples:
    """Every sample an endpoint serves, parsed by prometheus_client's own parser."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return [
        (s.name, dict(s.labels), s.value) for f in text_string_to_metric_families(text) for s in f.samples
    ]


def total(samples: Samples, name: str, **labels: str) -> float:
    """The sum of a series over every worker and every other label (what PromQL's sum() gives)."""
    return sum(v for n, ls, v in samples if n == name and all(ls.get(k) == x for k, x in labels.items()))


@pytest.mark.integration
@pytest.mark.timeout(180)
def test_the_job_and_cost_counters_of_all_workers_match_the_batch_report(
    celery_stack: Callable[..., CeleryStack], simulator: Callable[..., str], tmp_path: Path
) -> None:
    # Given a prefork model worker and a threads control worker, each serving its metrics, on the simulator
    stack = celery_stack(simulator("realistic", latency_scale=0.0, seed=3))
    ports = {"model": free_port(), "control": free_port()}
    stack.start_worker(
        pool="prefork",
        concurrency=2,
        queues=",".join(MODEL_QUEUES),
        env={"SUTURE_WORKER__METRICS_PORT": str(ports["model"])},
    )
    stack.start_worker(
        concurrency=4, queues="suture.control", env={"SUTURE_WORKER__METRICS_PORT": str(ports["control"])}
    )

    # When a batch runs on them with the full-regeneration policy (some quizzes end soft-delivered)
    out = tmp_path / "out"
    done = stack.cli(
        "batch", str(ROOT / "examples"), "--out", str(out), "--policy", "full-only", "--questions", "6"
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((out / "report.json").read_text())

    # Then the workers' series, summed as Prometheus would, count the report's jobs by status and its cost
    samples = scrape(ports["model"]) + scrape(ports["control"])
    finished = {s: total(samples, "suture_jobs_finished_total", status=s) for s in STATUSES}
    assert finished == {s: float(report[s]) for s in STATUSES}
    assert report["jobs"] > 0 and report["soft_delivered"] + report["delivered"] > 0
    assert total(samples, "suture_model_cost_usd_total") == pytest.approx(report["cost_usd"], abs=2e-6)
    for kind, key in TOKEN_KINDS.items():
        assert total(samples, "suture_model_tokens_total", kind=kind) == report["tokens"].get(key, 0), kind
    assert total(samples, "suture_job_seconds_count") == report["jobs"]
    # ...every attempt the report's traces hold is counted once, by mode and outcome
    attempts: dict[tuple[str, str], int] = defaultdict(int)
    for trace in (out / "traces").glob("*.json"):
        for attempt in json.loads(trace.read_text())["attempts"]:
            attempts[(attempt["mode"], attempt["outcome"])] += 1
    assert {k: float(v) for k, v in attempts.items()} == attempts_by_mode_and_outcome(samples)
    # ...and both endpoints show the cluster's gauges: no message waiting, no job unfinished
    for port in ports.values():
        gauges = scrape(port)
        assert total(gauges, "suture_queue_messages", queue="suture.model") == 0
        assert total(gauges, "suture_jobs_unfinished") == 0
        assert total(gauges, "suture_model_calls_in_flight") == 0


def attempts_by_mode_and_outcome(samples: Samples) -> dict[tuple[str, str], float]:
    """Attempts summed over workers and models, by (mode, outcome)."""
    sums: dict[tuple[str, str], float] = defaultdict(float)
    for name, labels, value in samples:
        if name == "suture_attempts_total" and value:
            sums[(labels["mode"], labels["outcome"])] += value
    return dict(sums)


def exported_series() -> set[str]:
    """Every series name suture's metrics can expose (counters as *_total, histograms' parts)."""
    from dataclasses import fields

    from suture.workers.runtime.cluster_gauges import ClusterGauges
    from suture.workers.runtime.metrics import metrics

    names = set(ClusterGauges.NAMES)
    for field in fields(metrics()):
        metric = getattr(metrics(), field.name)
        suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_sum", "_count"]}.get(metric._type, [""])
        names |= {metric._name + suffix for suffix in suffixes}
    return names


def test_the_grafana_dashboard_uses_only_series_suture_exports() -> None:
    # Given the dashboard shipped in docs/
    dashboard = json.loads((ROOT / "docs" / "grafana-dashboard.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]

    # Then every suture series its queries name exists, and every exported series is graphed
    used = {name for expr in exprs for name in re.findall(r"\bsuture_[a-z_]+", expr)}
    assert used <= exported_series()
    assert {name.removesuffix("_bucket") for name in used} >= {
        n for n in exported_series() if not n.endswith(("_sum", "_count", "_bucket"))
    } | {"suture_job_seconds"}


def test_render_gives_an_api_this_process_series_and_the_cluster_gauges(redis_url: str) -> None:
    from suture.config.settings import load_settings
    from suture.workers.runtime.app import configure
    from suture.workers.runtime.metrics import render

    # Given settings naming a reachable broker and store with nothing queued
    settings = load_settings(overrides={"broker_url": redis_url, "redis_url": redis_url})
    try:
        # When the text an API serves at /metrics is rendered
        body, content_type = render(settings)
    finally:
        configure(settings)  # a reachable broker for the next test (none configured is no broker at all)

    # Then it is Prometheus' text format, with the job counters and the cluster's gauges
    assert content_type.startswith("text/plain")
    families = {f.name for f in text_string_to_metric_families(body.decode())}
    assert {"suture_jobs_finished", "suture_queue_messages", "suture_jobs_unfinished"} <= families


def test_threads_asking_for_the_metrics_at_once_share_one_set() -> None:
    # Given a fresh process whose metrics do not exist yet, and 32 threads released together
    script = """
import threading
from suture.workers.runtime import metrics as m
start, got, errors = threading.Barrier(32), [], []
def ask():
    start.wait()
    try:
        got.append(m.metrics())
    except Exception as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=ask) for _ in range(32)]
for t in threads: t.start()
for t in threads: t.join()
print(len(errors), len({id(x) for x in got}), errors[:1])
"""
    # When each asks for the metrics
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    # Then none fails on a duplicate registration, and all got the same set
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:2] == ["0", "1"], done.stdout
