"""Repair overhead benchmark: what a valid quiz costs relative to its first attempt, policy by policy.

On the built-in simulator (**a simulation, not a real model**, reached over HTTP through the real
openai client), every policy runs over the same sections and request seeds: the sample documents
of ``examples/`` cut at several section sizes (``bench.repair_corpus``), so the corpus mixes short
sections (under 2,500 characters) with long ones. From the traces it reports, per policy: the
valid rate, the repair overhead (``suture.workers.reports.repair_overhead``: overall, median, p90,
max; goal <= 1.3 overall at >= 99 % valid for the default policy), the wall-time ratio (goal:
median <= 1.15), the cost per valid quiz, where the extra cost goes (per step, split into fresh
input, cached input, visible output and reasoning, in multiples of the first attempts' cost) and
the prompt tokens of one surgical slice. The default policy and the full-only chain always run.

Run ``python -m bench.bench_repair [--seeds N] [--scale S] [--policy NAME ...]``; writes
``## Repair overhead`` of docs/benchmarks.md. Exit 1 if a goal of the default policy is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench import machine, write_section
from bench.repair_corpus import corpus
from bench.repair_report import PolicyFigures, figures, render
from suture.config.settings import Settings, load_settings
from suture.contracts.registry import resolve_params
from suture.tasks.policy import Policy, load_policy
from suture.tasks.runner import run_inline
from suture.tasks.spec import EngineOptions, JobSpec
from suture.workers.batch.evaluation import SeededCaller
from suture.workers.model.client import ModelClient
from suture.workers.simulator import start_simulator

TITLE = "Repair overhead"
ROOT = Path(__file__).resolve().parent.parent
BEFORE = ROOT / "bench" / "baselines" / "repair_before.json"
QUESTIONS = 15
ALWAYS = ("default", "full-only")
SIMULATOR_ASSUMPTIONS = (
    "What rests on the simulator alone (a simulation, not a real model): a slice's fix rate by model and "
    "reasoning effort is derived from each model's per-question bias (seed 000's calibration) with one "
    "calibrated constant and two modelling assumptions (`workers/simulator/repair_skill.py`), so the default "
    "policy's minimal reasoning effort on nano slices and the order of its surgical passes (nano, nano, then "
    "mini) rest on those assumptions; a whole-question slice reorders its options in a quarter of the cases "
    "(an assumption, no production figure), which counts against whole-question slices; and the simulator "
    "draws any new prompt afresh at the model's rate, where a real model may repeat its bias on the same "
    "item. `full-only` sends no feedback (each retry is "
    "drawn afresh), so it measures a plain retry, not what a user would pick instead: that comparison is "
    '"Peers" (`bench/bench_peers.py`), over the range of how well a model acts on feedback.'
)


def run_policy(
    policy: Policy, sections: Sequence[str], seeds: Sequence[int], settings: Settings, concurrency: int
) -> list[dict[str, Any]]:
    """Every (seed, section) job of one policy, inline, ``concurrency`` at a time; their results."""
    client = ModelClient(settings)
    callers = {seed: SeededCaller(client.call, seed) for seed in seeds}
    options = EngineOptions.from_settings(settings)
    params = resolve_params("quiz", {"questions": QUESTIONS}, settings)  # what enqueue would store

    def one(job: tuple[int, int]) -> dict[str, Any]:
        seed, index = job
        source = sections[index]
        spec = JobSpec(
            job_id=f"repair-{policy.name}-s{seed}-{index}",
            contract="quiz",
            params=params,
            policy=policy.name,
            source=source,
            simulated=True,
            options=options,
        )
        return run_inline(spec, policy, callers[seed], settings)

    jobs = [(seed, index) for seed in seeds for index in range(len(sections))]
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        return list(pool.map(one, jobs))


def main(argv: Sequence[str] | None = None) -> int:
    """Run every policy over the corpus, write the section, exit 1 if a default-policy goal is missed."""
    parser = argparse.ArgumentParser(prog="python -m bench.bench_repair")
    parser.add_argument("--seeds", type=int, default=3, help="request seeds (runs over the corpus)")
    parser.add_argument("--scale", type=float, default=0.25, help="simulator latency scale")
    parser.add_argument("--concurrency", type=int, default=48, help="jobs in flight")
    parser.add_argument("--policy", action="append", default=[], help="another policy to compare (repeat)")
    parser.add_argument("--no-write", action="store_true", help="print the section, do not write it")
    parser.add_argument(
        "--before", type=Path, default=BEFORE, help="a run recorded with --record, to compare with"
    )
    parser.add_argument("--record", type=Path, help="write this run's figures as JSON (a later --before)")
    parser.add_argument("--note", default="", help="what the recorded run is (with --record)")
    args = parser.parse_args(argv)
    settings = load_settings(overrides={"openai_api_key": "sk-bench-simulated"})
    sections = corpus(settings)
    seeds = list(range(1, args.seeds + 1))
    names = list(dict.fromkeys([*ALWAYS, *args.policy]))
    sim = start_simulator("realistic", latency_scale=args.scale, seed=0)
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    results: dict[str, PolicyFigures] = {}
    try:
        settings = settings.model_copy(update={"openai_base_url": sim.base_url})
        for name in names:
            policy = load_policy(name, settings)
            jobs = run_policy(policy, sections, seeds, settings, args.concurrency)
            results[name] = figures(name, jobs, settings)
            print(f"bench_repair: {name}: {results[name].line()}", flush=True)
    finally:
        sim.stop()
    wall_s = time.perf_counter() - started
    load = f"load average {load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    lengths = [len(s) for s in sections]
    setup = (
        f"Machine: {machine()}; {load} (shared with other work: costs are deterministic per seed, "
        f"wall-time ratios vary with the load).\n"
        "Model: the built-in simulator (**a simulation, not a real model**), `realistic` profile, reached "
        "over "
        f"HTTP through the real `openai` client; request seeds {', '.join(map(str, seeds))}; latency scale "
        f"{args.scale:g} (latencies are measured by the client: at a much smaller scale this process's own "
        f"CPU time would inflate the short slice calls); {args.concurrency} jobs in flight; "
        f"{wall_s:.0f} s wall in all.\n"
        f"Corpus: {len(sections)} sections of the sample documents (`examples/`) cut at several section "
        "sizes: "
        f"{min(lengths)} to {max(lengths)} characters, median {statistics.median(lengths):.0f}, "
        f"{sum(1 for n in lengths if n < 2500)} under 2,500; {QUESTIONS} questions per quiz; "
        f"{len(sections) * len(seeds)} jobs per policy."
    )
    setup += "\n\n" + SIMULATOR_ASSUMPTIONS
    before = json.loads(args.before.read_text(encoding="utf-8")) if args.before.is_file() else None
    body, ok = render(setup, results, before)
    print(body)
    if args.record is not None:
        record(args.record, results, args.note, seeds, len(sections))
    if not args.no_write:
        write_section(TITLE, body)
    return 0 if ok else 1


def record(path: Path, results: dict[str, PolicyFigures], note: str, seeds: list[int], sections: int) -> None:
    """Write the run's figures, with the commit they were measured at, for a later ``--before``."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False, cwd=ROOT
    ).stdout.strip()
    recorded = {"commit": commit or "unknown", "note": note, "file": str(path.resolve().relative_to(ROOT))}
    data = {
        "recorded": {**recorded, "seeds": seeds, "sections": sections},
        "policies": {name: figures.as_dict() for name, figures in results.items()},
    }
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
