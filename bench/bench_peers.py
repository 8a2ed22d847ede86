"""Peer benchmark: suture against what a user would pick instead, Instructor and pydantic-ai.

On the built-in simulator (**a simulation, not a real model**, reached over HTTP through the real
openai client), each system writes the same quizzes: ``--sections`` sections of the sample documents
of mixed length (``bench.repair_corpus``, spread over its range) times ``--seeds`` request seeds, one
model (gpt-5-nano at low effort, suture's first step), suture's quiz contract as every system's
validator (``bench.peer_systems``). The systems: suture ``default`` and ``full-only``; Instructor in
JSON-schema mode with ``max_retries`` 1, 3 and 5; pydantic-ai with ``NativeOutput`` and an output
validator, ``retries`` 1, 3 and 5. The peers' first call sends suture's first-attempt messages, and
the bench checks that every first call cost the same as suture's: the figures measure the repair
step alone.

How well a model acts on feedback about a whole output is the unknown that decides this comparison
(no real model can be reached here), so it is swept: ``simulator.reask.fix_rate`` (the share of
items a re-ask names that come back fixed, ``workers/simulator/reask.py``) over ``--fix-rates``,
0 (feedback is worth nothing) to 0.95 (a model as good at acting on a re-ask as at a surgical slice);
``keep_rate`` stays at its default (0.95). Per point and system: valid %, $ per valid quiz, calls and
sequential rounds per quiz, total / first-attempt cost, median wall time per quiz.

Run ``python -m bench.bench_peers [--seeds N] [--sections N] [--fix-rates 0,0.5,...]``; writes
``## Peers`` of docs/benchmarks.md. Exit 1 if a first call's cost differs from suture's.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import instructor
from openai import AsyncOpenAI, OpenAI

from bench import machine, write_section
from bench.peer_systems import (
    Quizlet,
    QuizRun,
    first_call_recorder,
    gather_limited,
    recording_acreate,
    recording_create,
    run_instructor,
    run_pydantic_ai,
    suture_run,
)
from bench.repair_corpus import corpus
from suture.config.settings import Settings, load_settings
from suture.contracts.registry import resolve_params
from suture.tasks.calls import ModelCall
from suture.tasks.engine import EngineOptions, JobSpec
from suture.tasks.policy import load_policy
from suture.tasks.runner import run_inline
from suture.workers.batch.evaluation import SeededCaller
from suture.workers.model.client import ModelClient
from suture.workers.simulator.configure import start_from_settings

TITLE = "Peers"
ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = 15
RETRIES = (1, 3, 5)
API_KEY = "sk-bench-simulated"


def spread(sections: Sequence[str], count: int) -> list[str]:
    """``count`` sections evenly spread over the corpus (sorted by length): short and long ones alike."""
    if count >= len(sections):
        return list(sections)
    return [sections[round(i * (len(sections) - 1) / (count - 1))] for i in range(count)]


def run_suture(
    name: str, sections: Sequence[str], seeds: Sequence[int], settings: Settings, concurrency: int
) -> tuple[list[QuizRun], dict[str, ModelCall]]:
    """Every (seed, section) job of one suture policy, inline; their runs and their first calls by job."""
    policy = load_policy(name, settings)
    client = ModelClient(settings)
    firsts: dict[str, ModelCall] = {}
    callers = {seed: first_call_recorder(SeededCaller(client.call, seed), firsts) for seed in seeds}
    options = EngineOptions.from_settings(settings)
    params = resolve_params("quiz", {"questions": QUESTIONS}, settings)

    def one(job: tuple[int, int]) -> QuizRun:
        seed, index = job
        spec = JobSpec(
            job_id=f"peers-{name}-s{seed}-{index}",
            contract="quiz",
            params=params,
            policy=name,
            source=sections[index],
            simulated=True,
            options=options,
        )
        started = time.perf_counter()
        result = run_inline(spec, policy, callers[seed], settings)
        return suture_run(result, time.perf_counter() - started)

    jobs = [(seed, index) for seed in seeds for index in range(len(sections))]
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        return list(pool.map(one, jobs)), firsts


def quizlets(
    sections: Sequence[str], seeds: Sequence[int], firsts: dict[str, ModelCall], settings: Settings
) -> list[Quizlet]:
    """The quizzes the peers write: suture default's jobs, each with the first call it sent."""
    params = resolve_params("quiz", {"questions": QUESTIONS}, settings)
    return [
        Quizlet(f"s{seed}-{index}", seed, source, params, firsts[f"peers-default-s{seed}-{index}"])
        for seed in seeds
        for index, source in enumerate(sections)
    ]


def run_peers(
    quizzes: Sequence[Quizlet], base_url: str, settings: Settings, concurrency: int
) -> dict[str, list[QuizRun]]:
    """Instructor and pydantic-ai at each retry budget over the same quizzes."""
    model = quizzes[0].first.model
    runs: dict[str, list[QuizRun]] = {}
    sync = OpenAI(base_url=base_url, api_key=API_KEY, max_retries=0)
    sync.chat.completions.create = recording_create(sync.chat.completions.create, model, settings)  # type: ignore[method-assign]
    patched = instructor.from_openai(sync, mode=instructor.Mode.JSON_SCHEMA)
    for retries in RETRIES:
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            runs[f"Instructor, max_retries={retries}"] = list(
                pool.map(lambda q, r=retries: run_instructor(patched, q, r, settings), quizzes)
            )

    def async_client() -> AsyncOpenAI:
        client = AsyncOpenAI(base_url=base_url, api_key=API_KEY, max_retries=0)
        client.chat.completions.create = recording_acreate(client.chat.completions.create, model, settings)  # type: ignore[method-assign]
        return client

    for retries in RETRIES:
        runs[f"pydantic-ai, retries={retries}"] = gather_limited(
            lambda client, r=retries: [run_pydantic_ai(client, q, r, settings) for q in quizzes],
            async_client,
            concurrency,
        )
    return runs


def row(name: str, runs: Sequence[QuizRun]) -> tuple[str, dict[str, Any]]:
    """One table row's figures for a system's runs."""
    n = len(runs)
    valid = sum(r.valid for r in runs)
    cost = sum(r.cost_usd for r in runs)
    first = sum(r.first_cost_usd for r in runs)
    figures = {
        "valid": valid / n,
        "per_valid": cost / valid if valid else None,
        "calls": sum(r.calls for r in runs) / n,
        "rounds": sum(r.rounds for r in runs) / n,
        "overhead": cost / first if first else None,
        "wall_s": statistics.median(r.wall_s for r in runs),
    }
    per_valid = f"{figures['per_valid']:.6f}" if figures["per_valid"] is not None else "-"
    overhead = f"{figures['overhead']:.2f}" if figures["overhead"] is not None else "-"
    line = (
        f"| {name} | {figures['valid']:.0%} | {per_valid} | {figures['calls']:.1f} | {figures['rounds']:.1f} "
        f"| {overhead} | {figures['wall_s']:.1f} |"
    )
    return line, figures


def first_mismatches(suture: Sequence[QuizRun], peers: dict[str, list[QuizRun]]) -> list[str]:
    """The peers whose first call cost other than suture default's first attempt on some quiz."""
    return [
        name
        for name, runs in peers.items()
        if any(abs(p.first_cost_usd - s.first_cost_usd) > 1e-12 for p, s in zip(runs, suture, strict=True))
    ]


def sweep_point(
    fix_rate: float,
    sections: Sequence[str],
    seeds: Sequence[int],
    settings: Settings,
    args: argparse.Namespace,
) -> tuple[str, dict[str, dict[str, Any]], list[str]]:
    """Every system at one fix rate: the markdown table, the figures by system, any first-call mismatch."""
    reask = settings.simulator.reask.model_copy(update={"fix_rate": fix_rate})
    simulator = settings.simulator.model_copy(update={"reask": reask, "profile": "realistic", "seed": 0})
    sim_settings = settings.model_copy(update={"simulator": simulator})
    handle = start_from_settings(sim_settings, latency_scale=args.scale)
    try:
        local = settings.model_copy(update={"openai_base_url": handle.base_url})
        default, firsts = run_suture("default", sections, seeds, local, args.concurrency)
        full_only, _ = run_suture("full-only", sections, seeds, local, args.concurrency)
        peers = run_peers(quizlets(sections, seeds, firsts, local), handle.base_url, local, args.concurrency)
    finally:
        handle.stop()
    systems = {"suture default": default, "suture full-only": full_only, **peers}
    lines, figures = [], {}
    for name, runs in systems.items():
        line, figures[name] = row(name, runs)
        lines.append(line)
        print(f"bench_peers: fix_rate {fix_rate:g}: {line}", flush=True)
    verdict = compare(figures)
    print(f"bench_peers: fix_rate {fix_rate:g}: {verdict}", flush=True)
    header = (
        f"**`simulator.reask.fix_rate` = {fix_rate:g}**\n\n"
        "| system | valid | $ per valid quiz | calls per quiz | sequential rounds per quiz "
        "| total ÷ first-attempt cost | median wall s per quiz |\n|---|---:|---:|---:|---:|---:|---:|"
    )
    table = header + "\n" + "\n".join(lines) + "\n\n" + verdict
    return table, figures, first_mismatches(default, peers)


def compare(figures: dict[str, dict[str, Any]]) -> str:
    """One sentence: the best peer against suture default, and any peer cheaper per valid quiz at an
    equal or higher valid rate."""
    ours = figures["suture default"]
    peers = {n: f for n, f in figures.items() if not n.startswith("suture")}
    best_name, best = max(
        peers.items(), key=lambda kv: (kv[1]["valid"], -(kv[1]["per_valid"] or float("inf")))
    )
    if best["per_valid"] is None:
        said = f"Best peer: none delivers a valid quiz (suture default: {ours['valid']:.0%} valid)."
    else:
        ratio = best["per_valid"] / ours["per_valid"] if ours["per_valid"] else float("inf")
        said = (
            f"Best peer: {best_name}, {best['valid']:.0%} valid at {ratio:.1f} x suture default's "
            "$ per valid "
            f"quiz (suture default: {ours['valid']:.0%} valid)."
        )
    winners = [
        n
        for n, f in peers.items()
        if f["per_valid"] is not None
        and ours["per_valid"] is not None
        and f["valid"] >= ours["valid"]
        and f["per_valid"] < ours["per_valid"]
    ]
    if winners:
        return said + f" Cheaper per valid quiz at an equal or higher valid rate: {', '.join(winners)}."
    return said + " No peer is cheaper per valid quiz at an equal or higher valid rate."


def main(argv: Sequence[str] | None = None) -> int:
    """Run every system at every sweep point, write the section; exit 1 if a first call's cost differs."""
    parser = argparse.ArgumentParser(prog="python -m bench.bench_peers")
    parser.add_argument("--seeds", type=int, default=2, help="request seeds (runs over the sections)")
    parser.add_argument("--sections", type=int, default=30, help="sections, spread over the corpus")
    parser.add_argument("--scale", type=float, default=0.02, help="simulator latency scale")
    parser.add_argument("--concurrency", type=int, default=24, help="quizzes in flight per system")
    parser.add_argument("--fix-rates", default="0,0.5,0.8,0.95", help="simulator.reask.fix_rate values")
    parser.add_argument("--no-write", action="store_true", help="print the section, do not write it")
    args = parser.parse_args(argv)
    logging.getLogger("instructor").setLevel(logging.CRITICAL)  # each exhausted retry would print its errors
    settings = load_settings(overrides={"openai_api_key": API_KEY})
    sections = spread(corpus(settings), args.sections)
    seeds = list(range(1, args.seeds + 1))
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    tables, mismatched = [], []
    for fix_rate in (float(x) for x in args.fix_rates.split(",")):
        table, _, wrong = sweep_point(fix_rate, sections, seeds, settings, args)
        tables.append(table)
        mismatched += [f"{name} at fix_rate {fix_rate:g}" for name in wrong]
    wall_s = time.perf_counter() - started
    body = setup_text(sections, seeds, args, wall_s, load_before, mismatched) + "\n\n" + "\n\n".join(tables)
    print(body)
    if not args.no_write:
        write_section(TITLE, body)
    return 1 if mismatched else 0


def setup_text(
    sections: Sequence[str],
    seeds: Sequence[int],
    args: argparse.Namespace,
    wall_s: float,
    load_before: float,
    mismatched: Sequence[str],
) -> str:
    """The run's machine, commit, settings and assumptions, above the tables."""
    commit = _git("rev-parse", "--short", "HEAD")
    versions = f"Instructor {_version('instructor')}, pydantic-ai {_version('pydantic-ai-slim')}"
    lengths = [len(s) for s in sections]
    check = (
        "every peer's first call cost exactly what suture default's first attempt cost, quiz by quiz"
        if not mismatched
        else f"FIRST CALLS DIFFER: {', '.join(mismatched)}"
    )
    return (
        f"Machine: {machine()}; load average {load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the "
        f"end (shared: costs are deterministic per seed, wall times vary with the load). Commit {commit}; "
        f"{versions}; {wall_s:.0f} s wall in all.\n"
        f"Model: the built-in simulator (**a simulation, not a real model**), `realistic` profile, seed 0, "
        f"latency scale {args.scale:g}, reached over HTTP through the real `openai` client; "
        "gpt-5-nano at low "
        f"effort for every first call (suture's first step; its later steps are its own); request seeds "
        f"{', '.join(map(str, seeds))}; {len(sections)} sections of `examples/` ({min(lengths)} to "
        f"{max(lengths)} characters, median {statistics.median(lengths):.0f}) x {len(seeds)} seeds = "
        f"{len(sections) * len(seeds)} quizzes of {QUESTIONS} questions per system; {args.concurrency} in "
        f"flight. Validator: suture's quiz contract for every system. First-call check: {check}.\n"
        "Assumptions: a re-ask (a whole output handed back with feedback) fixes each item it names at "
        "`simulator.reask.fix_rate`, swept below, and returns the other named items as they were (failure "
        "and all); it copies each item it does not name at `keep_rate` 0.95 and draws the rest afresh at the "
        "model's bias; a surgical slice's fix rate is derived as in "
        "`workers/simulator/repair_skill.py` (nano@minimal 0.925). Neither is measured on a real model: "
        "`suture calibrate` is how to measure them on yours. `full-only` sends no feedback (a plain retry "
        "redraws everything), so it does not move with the sweep. Wall times come from a latency scale "
        "of 0.02 on a loaded machine: compare them between rows, not with the real world."
    )


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], capture_output=True, text=True, check=False, cwd=ROOT)
    return done.stdout.strip() or "unknown"


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


if __name__ == "__main__":
    sys.exit(main())
