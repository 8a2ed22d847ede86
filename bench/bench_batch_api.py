"""Cost per valid quiz with OpenAI's Batch API against online calls: `suture batch` on examples/, same
simulator.

For each seed, runs the real CLI (embedded stack with its own redis-server, so nothing is reused
between runs) three times on the sample documents against one simulator (a simulation, not a real
model): online (the baseline, measured in the same run), ``--batch-api first`` and ``--batch-api``
(all). Reads each run's report.json: quizzes fully valid (``delivered``), the batch's cost, and
the simulator's count of batches and batch lines. Goal (issue 16): cost per valid quiz with the
Batch API <= 0.6 x online, at the same valid rate. Writes the ``## Batch API`` section of
docs/benchmarks.md. Usage: ``.venv/bin/python -m bench.bench_batch_api [--seeds 1 2 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2

from suture.workers.local.redis_server import redis_binary
from suture.workers.simulator import start_simulator
from suture.workers.simulator.batches import BatchOptions
from tests.fixtures.redis_server import free_port

ROOT = Path(__file__).parents[1]
EXAMPLES = ROOT / "examples"
MODES = ("off", "first", "all")
GOAL_RATIO = 0.6
BATCH_DELAY_S = 3.0
SECTION = "## Batch API"


def run_mode(mode: str, base_url: str, tmp: Path) -> dict[str, Any]:
    """One `suture batch` of examples/ in ``mode``, on a redis-server of its own; its report's figures."""
    port = free_port()
    redis = subprocess.Popen(
        [str(redis_binary()), "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.3)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_", "SENTRY_"))}
        env.pop("XDG_RUNTIME_DIR", None)
        env |= {
            "HOME": str(tmp),
            "REDIS_URL": f"redis://127.0.0.1:{port}/0",
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "sk-bench-not-a-real-key",
            "SUTURE_WORKER__WATCHDOG_INTERVAL_S": "1",
            "SUTURE_BATCH_API__COLLECT_S": "2",
            "SUTURE_BATCH_API__POLL_S": "1",
        }
        out = tmp / f"out-{mode}"
        argv = [sys.executable, "-m", "suture", "batch", str(EXAMPLES), "--out", str(out)]
        argv += [] if mode == "off" else ["--batch-api", mode]
        started = time.monotonic()
        done = subprocess.run(
            argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False
        )
        wall_s = time.monotonic() - started
        if done.returncode != 0:
            raise SystemExit(f"suture batch ({mode}) failed with {done.returncode}: {done.stderr[-2000:]}")
        report = json.loads((out / "report.json").read_text())
    finally:
        redis.terminate()
        redis.wait(timeout=10)
    statuses = {s: int(report.get(s) or 0) for s in ("delivered", "soft_delivered", "failed", "refused")}
    return {"mode": mode, **statuses, "cost_usd": float(report["cost_usd"]), "wall_s": wall_s}


def run_seed(seed: int) -> list[dict[str, Any]]:
    """The three modes against one simulator (one seed); each row adds the simulator's batch figures."""
    handle = start_simulator("realistic", 0.0, seed=seed, batch_options=BatchOptions(delay_s=BATCH_DELAY_S))
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="suture-bench-batchapi-") as tmp:
            for mode in MODES:
                before = _batches(handle.base_url)
                row = run_mode(mode, handle.base_url, Path(tmp))
                after = _batches(handle.base_url)
                row |= {
                    "seed": seed,
                    "batches": after["count"] - before["count"],
                    "batch_lines": after["requests"].get("total", 0) - before["requests"].get("total", 0),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
    finally:
        handle.stop()
    return rows


def _batches(base_url: str) -> dict[str, Any]:
    return dict(httpx2.get(f"{base_url}/_stats", timeout=5).json()["batches"])


def summarise(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per mode over every seed: sections, valid rate, cost, cost per valid quiz, its ratio to online."""
    table: dict[str, dict[str, float]] = {}
    for mode in MODES:
        mine = [r for r in rows if r["mode"] == mode]
        sections = sum(r["delivered"] + r["soft_delivered"] + r["failed"] + r["refused"] for r in mine)
        valid = sum(r["delivered"] for r in mine)
        cost = sum(r["cost_usd"] for r in mine)
        table[mode] = {
            "sections": sections,
            "valid": valid,
            "valid_rate": valid / sections if sections else 0.0,
            "cost_usd": cost,
            "per_valid_usd": cost / valid if valid else float("inf"),
            "batches": sum(r["batches"] for r in mine),
            "batch_lines": sum(r["batch_lines"] for r in mine),
            "wall_s": sum(r["wall_s"] for r in mine),
        }
    for mode in MODES:
        table[mode]["ratio"] = table[mode]["per_valid_usd"] / table["off"]["per_valid_usd"]
    return table


def write_section(table: dict[str, dict[str, float]], seeds: list[int]) -> None:
    path = ROOT / "docs" / "benchmarks.md"
    text = path.read_text()
    lines = [
        SECTION,
        "",
        f"`suture batch examples/` (4 sample documents, `--questions auto`, default policy), seeds {seeds}, "
        "each mode on its own embedded stack and redis-server against one suture simulator per seed",
        f"(a simulation, profile realistic, latency scale 0, batches complete after {BATCH_DELAY_S:g} s). "
        "Online "
        "is the baseline, measured in the same run. Cost is the simulated usage at the configured prices,",
        "a Batch API call at `batch_price_ratio` (0.5) of its online price. Goal (issue 16): cost per valid "
        f"quiz with `--batch-api` <= {GOAL_RATIO} x online at the same valid rate.",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}. "
        "`python -m bench.bench_batch_api`.",
        "",
        "| mode | sections | valid | valid rate | cost USD | USD per valid quiz | x online | batches | batch "
        "lines | wall s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for mode, row in table.items():
        lines.append(
            f"| {mode} | {row['sections']:.0f} | {row['valid']:.0f} | {row['valid_rate']:.1%} | "
            f"{row['cost_usd']:.4f} | {row['per_valid_usd']:.5f} | {row['ratio']:.2f} | {row['batches']:.0f} "
            "| "
            f"{row['batch_lines']:.0f} | {row['wall_s']:.0f} |"
        )
    verdicts = []
    for mode in ("all", "first"):
        row, base = table[mode], table["off"]
        met = row["ratio"] <= GOAL_RATIO and row["valid_rate"] >= base["valid_rate"]
        verdicts.append(
            f"`--batch-api {mode}`: {row['ratio']:.2f} x online per valid quiz, valid rate "
            f"{row['valid_rate']:.1%} vs {base['valid_rate']:.1%}: goal {'met' if met else 'NOT met'}."
        )
    lines += ["", *verdicts, ""]
    start = text.find(SECTION)
    if start == -1:
        text = text.rstrip("\n") + "\n\n" + "\n".join(lines)
    else:
        end = text.find("\n## ", start + len(SECTION))
        text = text[:start] + "\n".join(lines) + (text[end + 1 :] if end != -1 else "")
    path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    args = parser.parse_args(argv)
    rows = [row for seed in args.seeds for row in run_seed(seed)]
    table = summarise(rows)
    print(json.dumps(table, indent=2))
    write_section(table, args.seeds)
    met = all(table[m]["ratio"] <= GOAL_RATIO for m in ("all", "first"))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
