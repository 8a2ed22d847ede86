"""Policy comparison benchmark: ``suture eval examples/ --policy full-only --policy default``, recorded.

Runs the real command in-process (built-in simulator, **a simulation**, reached over HTTP through
the real openai client), reads its eval.json and writes the ``## Policy comparison (suture eval)``
section of docs/benchmarks.md next to the seed-000 production data point. Latency is measured at
``--latency-scale`` and also shown divided by it (the simulator's full-scale estimate).

Run ``python -m bench.bench_eval [--runs N] [--latency-scale S] [--questions Q] [--contract NAME]``; a
contract other than the quiz (``--contract outline``) gets a section of its own,
``## Policy comparison: <name> (suture eval)``, whose steps count every failure left.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import machine, write_section
from suture.workers.cli import main as suture
from suture.workers.reports.eval_html import overhead

TITLE = "Policy comparison (suture eval)"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SEED_000 = (
    "production, real models (seed 000): gpt-5-nano@low converges to ~5.5/15 questions with imbalanced "
    "options, gpt-5-mini@low ~2.7/15; a surgical nano step fixed 3/3 failing questions in 14.8 s vs "
    "~60 s for a full regeneration, for ~$0.0003"
)


def main(argv: list[str] | None = None) -> int:
    """Run the comparison and write the section; exit code of ``suture eval``."""
    parser = argparse.ArgumentParser(prog="python -m bench.bench_eval")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--latency-scale", type=float, default=0.2)
    parser.add_argument("--questions", type=int, default=15)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--contract", default="quiz")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="suture-bench-eval-") as out:
        command = [
            "eval",
            str(EXAMPLES),
            "--policy",
            "full-only",
            "--policy",
            "default",
            "--runs",
            str(args.runs),
            "--latency-scale",
            str(args.latency_scale),
            "--questions",
            str(args.questions),
            "--concurrency",
            str(args.concurrency),
            "--out",
            out,
            "--contract",
            args.contract,
        ]
        started = time.perf_counter()
        code = suture(command)
        wall_s = time.perf_counter() - started
        if code != 0:
            print(f"bench_eval: suture eval exited {code}", file=sys.stderr)
            return code
        report = json.loads((Path(out) / "eval.json").read_text(encoding="utf-8"))
    quiz = args.contract == "quiz"
    title = TITLE if quiz else f"Policy comparison: {args.contract} (suture eval)"
    write_section(title, section(report, args.latency_scale, wall_s) if quiz else other(report, args, wall_s))
    return 0


def section(report: dict[str, Any], scale: float, wall_s: float) -> str:
    """The markdown body: machine, settings, the comparison table, per-step detail, seed 000."""
    s = report["settings"]
    lines = [
        f"Machine: {machine()}.",
        f"Command: `suture eval examples/ --policy full-only --policy default --runs {s['runs']} "
        f"--latency-scale {scale:g} --questions {s['questions']}` ({s['documents']} documents, "
        f"{s['sections']} sections, {s['jobs_per_policy']} jobs per policy, {s['concurrency']} at a time; "
        f"{wall_s:.0f} s wall in all).",
        "Model: the built-in simulator (**a simulation, not a real model**), `realistic` profile, "
        "request seed = run number; packaged prices and quiz rules.",
        "",
        "| policy | valid | first try | after repair | soft-delivered | failed/refused | $ per valid quiz "
        "| repair overhead (median/p90/max) | p50 / p95 s (measured) | p50 / p95 s (÷ scale) | tokens per "
        "job |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, p in report["policies"].items():
        cost = p["cost_per_valid_usd"]
        p50, p95 = p["latency_p50_ms"] / 1000, p["latency_p95_ms"] / 1000
        full = f"{p50 / scale:.1f} / {p95 / scale:.1f}" if scale > 0 else "-"
        lines.append(
            f"| {name} | {_pct(p['valid_rate'])} | {_pct(p['first_try_rate'])} | {_pct(p['repaired_rate'])} "
            f"| {_pct(p['soft_delivered_rate'])} | {_pct(p['failed_rate'] + p['refused_rate'])} "
            f"| {'unknown' if cost is None else f'{cost:.5f}'} | {overhead(p.get('repair_overhead'))} "
            f"| {p50:.2f} / {p95:.2f} | {full} "
            f"| {p['tokens']['per_job']} |"
        )
    lines += ["", "Steps (surgical steps costed as the sum of their slice calls):", ""]
    lines += [
        "| policy | step | runs | calls | $ per run | s per run (÷ scale) | imbalanced left per run | fixed "
        "|",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, p in report["policies"].items():
        for label, st in p["steps"].items():
            fixed = ", ".join(f"{code} x{n}" for code, n in st["fixed"].items()) or "-"
            seconds = st["mean_latency_ms"] / 1000 / scale if scale > 0 else 0.0
            left = st["mean_failures_left"].get("imbalanced_options", 0.0)
            lines.append(
                f"| {name} | {label} | {st['runs']} | {st['calls']} | {st['mean_cost_usd']:.6f} "
                f"| {seconds:.1f} | {left:.2f}/{s['questions']} | {fixed} |"
            )
    lines += giveaway_rates(report, s["questions"])
    lines += ["", f"Next to it, {SEED_000}."]
    return "\n".join(lines)


GIVEAWAY_NOTE = (
    "The simulator's give-away habits are assumed rates (`workers/simulator/profiles.py`, "
    "`workers/simulator/stems.py`), not measurements of a real model; a long (biased) answer in a cloze stem "
    "is both imbalanced_options and long_blank_answer. The sample documents' sentences carry no heading "
    "number, so section_number_in_text stays at 0 here (tests/contracts/test_quiz_giveaways.py covers it)."
)
GIVEAWAY_CODES = (
    "answer_in_stem",
    "long_blank_answer",
    "distractor_overlaps_answer",
    "section_number_in_text",
    "repeated_stem_opening",
)


def giveaway_rates(report: dict[str, Any], questions: int) -> list[str]:
    """Each give-away rule's failures per 100 questions: after the first try, and left in the end.

    "Left" is what the last model step that ran left, over all jobs: a job stops early only once valid.
    """
    lines = [
        "",
        "Give-away rules (contracts/quiz_giveaways.py), failures per 100 questions: first try / left at the "
        "end:",
        "",
        "| policy | " + " | ".join(GIVEAWAY_CODES) + " |",
        "|---|" + "---:|" * len(GIVEAWAY_CODES),
    ]
    for name, p in report["policies"].items():
        steps = [st for label, st in p["steps"].items() if not label.startswith("fix:")]
        if not steps:
            continue
        jobs = max(steps[0]["runs"], 1)
        cells = []
        for code in GIVEAWAY_CODES:
            first = steps[0]["mean_failures_left"].get(code, 0.0) / questions * 100
            last = steps[-1]["mean_failures_left"].get(code, 0.0) * steps[-1]["runs"] / jobs / questions * 100
            cells.append(f"{first:.1f} / {last:.1f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return [*lines, "", GIVEAWAY_NOTE]


def other(report: dict[str, Any], args: argparse.Namespace, wall_s: float) -> str:
    """The section of a contract other than the quiz: the same table; steps count every failure left."""
    s, scale = report["settings"], args.latency_scale
    lines = [
        f"Machine: {machine()}.",
        f"Command: `suture eval examples/ --contract {args.contract} --policy full-only --policy default "
        f"--runs {s['runs']} --latency-scale {scale:g}` ({s['documents']} documents, {s['sections']} "
        "sections, "
        f"{s['jobs_per_policy']} jobs per policy, {s['concurrency']} at a time; {wall_s:.0f} s wall in all).",
        "Model: the built-in simulator (**a simulation, not a real model**), `realistic` profile: it writes "
        "the contract's outputs from its JSON Schema and injects structural faults per unit "
        f"(`simulator.unit_faults`: {s['simulator']['unit_faults'] if s.get('simulator') else '-'}); "
        "request seed = run number; packaged prices.",
        "",
        "| policy | valid | first try | after repair | soft-delivered | failed/refused | $ per valid output "
        "| repair overhead (median/p90/max) | tokens per job |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, p in report["policies"].items():
        cost = p["cost_per_valid_usd"]
        lines.append(
            f"| {name} | {_pct(p['valid_rate'])} | {_pct(p['first_try_rate'])} | {_pct(p['repaired_rate'])} "
            f"| {_pct(p['soft_delivered_rate'])} | {_pct(p['failed_rate'] + p['refused_rate'])} "
            f"| {'unknown' if cost is None else f'{cost:.6f}'} | {overhead(p.get('repair_overhead'))} "
            f"| {p['tokens']['per_job']} |"
        )
    lines += [
        "",
        "| policy | step | runs | calls | $ per run | failures left per run | fixed |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for name, p in report["policies"].items():
        for label, st in p["steps"].items():
            fixed = ", ".join(f"{code} x{n}" for code, n in st["fixed"].items()) or "-"
            left = sum(st["mean_failures_left"].values())
            lines.append(
                f"| {name} | {label} | {st['runs']} | {st['calls']} | {st['mean_cost_usd']:.6f} | {left:.2f} "
                f"| {fixed} |"
            )
    return "\n".join(lines)


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


if __name__ == "__main__":
    sys.exit(main())
