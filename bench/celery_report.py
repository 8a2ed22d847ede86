"""The "Distributed execution" section of docs/benchmarks.md, written from ``bench_celery``'s figures."""

from __future__ import annotations

import os
import platform
from typing import Any

TITLE = "Distributed execution"
ROUNDS = 5  # interleaved repeats of each measurement (bench_celery runs them)


def report(f: dict[str, Any]) -> str:
    first, surgical = f["first"], f["surgical"]
    ratio1 = first["suture"]["rate"] / first["bare"]["rate"]
    ratio2 = surgical["suture"]["rate"] / surgical["bare"]["rate"]
    ideal_s = f["slow_jobs"] * 1.0 / f["slow_in_flight"]
    limit_s = 1.25 * ideal_s
    slow_met = f["slow_elapsed_s"] <= limit_s and f["slow_in_flight"] >= 100
    bare_ms, call_ms = first["bare"]["cpu_ms"]["all"], f["call_cpu_ms"]
    lines = [
        f"`python -m bench.bench_celery` on {platform.node()} ({os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {platform.system()}); {f['workers']} Celery worker processes, threads "
        f"pool, {f['concurrency']} threads each ({f['slow_concurrency']} each for the 1 s latency run), "
        "queues suture.model + suture.control, suture's own settings (late acks, prefetch 1, task events "
        "and task-sent events on) for every side; a private redis-server as broker, result backend and job "
        "store; the model is a scripted OpenAI-compatible server in its own process (a simulation, not a "
        "real LLM), called through suture's model client (the openai SDK). Jobs: 4-question quizzes. Rates "
        f"are the median of {ROUNDS} interleaved repeats of {f['jobs']} jobs, after a warm-up. 1-minute load "
        f"average before the run {f['load_before']:.2f}, after {f['load_after']:.2f} (other work on this "
        "shared machine skews every side; compare ratios, not rates).",
        "",
        "| measurement | suture | bare Celery (same run, same broker) | ratio | goal |",
        "|---|---|---|---|---|",
        f"| first pass, instant model | {first['suture']['rate']:.1f} jobs/s "
        f"| {first['bare']['rate']:.1f} no-op round trips/s | {ratio1:.2f} | >= 0.7 "
        f"{_verdict(ratio1 >= 0.7)} |",
        f"| one surgical round of 3 slices | {surgical['suture']['rate']:.1f} jobs/s "
        f"| {surgical['bare']['rate']:.1f} chords (3 no-ops + callback)/s | {ratio2:.2f} "
        f"| >= 0.7 {_verdict(ratio2 >= 0.7)} |",
        f"| {f['slow_jobs']} jobs, 1.0 s model latency | {f['slow_elapsed_s']:.1f} s "
        f"(max {f['slow_in_flight']} calls in flight) | ideal {ideal_s:.1f} s | "
        f"{f['slow_elapsed_s'] / ideal_s:.2f} "
        f"| <= 1.25 x ideal ({limit_s:.1f} s) with >= 100 in flight {_verdict(slow_met)} |",
        "",
        "The same runs had a third side: bare Celery tasks of the same shape making the very model calls a "
        "suture job makes (suture's model client, the engine's prompts and schema, the same scripted "
        "server): one task with the first full call; a task with the full call chained to a chord of 3 "
        "tasks with the slice calls plus a callback. Its rate over the no-op baseline's is the most any "
        "system that makes these calls could show against the goal's baseline on this machine; suture's "
        "rate over its rate is what suture's own orchestration (job store, idempotency, validation, "
        "engine, delivery) costs:",
        "",
        "| measurement | bare Celery + the same model calls | its ratio to the no-op baseline (ceiling) "
        "| suture / bare Celery + the same model calls |",
        "|---|---|---|---|",
        *_with_calls_row("first pass, instant model", "round trips", first),
        *_with_calls_row(
            "one surgical round of 3 slices", "chains (1 call, then a chord of 3 calls + callback)", surgical
        ),
        "",
        *_missed_notices(f.get("missed_notices", 0)),
        "CPU per job by process (median of the same repeats, ms):",
        "",
        "| measurement | side | workers | producer | Redis | model server | all |",
        "|---|---|---|---|---|---|---|",
        *_cpu_rows("first pass", first),
        *_cpu_rows("surgical round", surgical),
        "",
        "With every side CPU-bound on the shared cores, the rate ratio follows the ratio of CPU per job. "
        "The no-op baselines make no model call; a suture first-pass job makes one, and a surgical job four. "
        f"One model call alone, measured in the same run (suture's client through the openai SDK and "
        f"the scripted server answering it, one call at a time), costs {call_ms:.2f} ms of CPU: "
        f"{call_ms / bare_ms:.0%} of a whole bare round trip ({bare_ms:.2f} ms). So even if every other "
        "part of a suture job (its Celery task, the job store's Lua scripts, validation, the engine, the "
        f"result) cost no more than the no-op task, the first-pass ratio could not exceed "
        f"{bare_ms / (bare_ms + call_ms):.2f}; under load (16 threads per worker process sharing one "
        "interpreter lock) a call costs more, and the bare side making the same calls above measures that "
        "ceiling directly. Removed so far (profiled with py-spy and cProfile): "
        "pydantic JSON-schema generation on every call (cached per output model and pointer), the SDK's "
        "per-call type walk of messages and schema (its plain `post`) and its response model (the reply "
        "is read from the JSON), a Redis client built by kombu for every publish, ack and event (one "
        "per pool: workers/kombu_patches.py), jsonpatch's move search in trace diffs (a structural "
        "diff), a result-channel subscription per suture task (`ignore_result`), separate Redis round "
        "trips for load/count/action/slice reads and for save-then-deliver (one Lua script each), a "
        "second load and validation of the state to deliver, a progress event just before "
        "task-succeeded, and one pipeline per publish plus its task-sent event (kombu publish batches). "
        "The 1 s run uses 100 threads in all (the goal's minimum in flight; 1000 / 100 is a whole number "
        "of 1 s rounds) and warms every thread's connection first, as the other runs warm up; the "
        "scripted server's listen backlog is raised in the bench (the fixture sets it after listening, "
        "so a burst of new connections lost SYNs and waited 1 s for the retransmit).",
        "",
    ]
    return "\n".join(lines)


SIDES = {"suture": "suture", "bare_calls": "bare + the same model calls", "bare": "bare no-op"}


def _with_calls_row(label: str, unit: str, figures: dict[str, Any]) -> list[str]:
    with_calls = figures["bare_calls"]["rate"]
    ceiling = with_calls / figures["bare"]["rate"]
    return [
        f"| {label} | {with_calls:.1f} {unit}/s | {ceiling:.2f} | "
        f"{figures['suture']['rate'] / with_calls:.2f} |"
    ]


def _missed_notices(count: int) -> list[str]:
    if not count:
        return []
    return [
        f"Celery's `result.get` missed the stored result of {count} bare chain(s) in this run (as in "
        "celery/celery#4039); the bench read each from the backend after a 1 s wait, which slowed one "
        "repeat of that side (the median of the repeats absorbs one such repeat).",
        "",
    ]


def _cpu_rows(label: str, figures: dict[str, Any]) -> list[str]:
    roles = ("workers", "producer", "redis", "model server", "all")
    return [
        f"| {label} | {name} | " + " | ".join(f"{figures[side]['cpu_ms'][r]:.2f}" for r in roles) + " |"
        for side, name in SIDES.items()
    ]


def _verdict(met: bool) -> str:
    return "met" if met else "NOT met"
