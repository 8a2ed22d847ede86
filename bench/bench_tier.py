"""Useful work at a low rate-limit tier (issue 36): `suture batch` against a binding TPM, as a new account
runs it.

Run ``python -m bench.bench_tier [TPM:SECTIONS ...] [--suture PATH] [--label NAME]``; writes the
``## Provider limits: a low tier`` section of docs/benchmarks.md (rows of earlier runs kept, a row
per label and TPM replaced). Everything runs against ``suture simulator`` (**a simulation**,
realistic profile, latency scale 1), metering gpt-5-nano and gpt-5-mini at TPM tokens and 3,000
requests a minute each, as OpenAI does (prompt + ``max_completion_tokens`` counted when a request
arrives). ``suture batch`` runs with default settings and the same ``limits:`` in a ``--config``
file, over SECTIONS one-section documents of about 1,600 characters (5 questions each), on the
embedded stack it starts; ``--suture`` names another checkout's ``suture`` executable (the "before").

Measured from the simulator's ``/v1/_stats``, sampled every second: served tokens (prompt +
completion of the replies), metered tokens (what the limits counted), 429s over requests, and
the batch's statuses. The sustained window runs from one minute after the first request (the full
bucket a run begins with is spent by then) to the last sample below 95 % of the final served total;
useful rate = served tokens over that window per minute, read against the TPM of one model.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import RESULTS_FILE, machine, write_section
from bench.limits_harness import model_stats, simulator_process

TITLE = "## Provider limits: a low tier"
MODELS = ("gpt-5-nano", "gpt-5-mini")
RPM = 3_000
SECTION_SENTENCES = 16
DEFAULT_RUNS = ("40000:30", "200000:100", "3000000:30")
FIELDS = ("label", "tpm", "sections", "statuses", "requests", "rate_limited", "served", "metered", "wall_s")


def _documents(folder: Path, count: int) -> None:
    from tests.reliability.conftest import varied_document

    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        text = varied_document(i, sentences=SECTION_SENTENCES)
        (folder / f"section_{i:03d}.md").write_text(f"# Section {i}\n\n{text}\n")


def _totals(stats: dict[str, Any]) -> tuple[int, int, int, int]:
    """(requests, 429s, served tokens, metered tokens) over the limited models."""
    models = stats.get("models", {})
    picked = [models.get(m, {}) for m in MODELS]
    return (
        sum(int(m.get("requests", 0)) for m in picked),
        sum(int(m.get("limited", 0)) for m in picked),
        sum(int(m.get("tokens", 0)) for m in picked),
        sum(int(m.get("metered_tokens", 0)) for m in picked),
    )


def sustained(samples: list[tuple[float, int]]) -> tuple[float, float] | None:
    """(window s, served tokens a minute) from 60 s after the start to the last sample below 95 % of the
    total."""
    if not samples:
        return None
    final = samples[-1][1]
    inside = [(t, v) for t, v in samples if t >= 60.0 and v < 0.95 * final]
    if len(inside) < 2:
        return None
    (t0, v0), (t1, v1) = inside[0], inside[-1]
    return t1 - t0, (v1 - v0) * 60.0 / (t1 - t0)


def run_one(tpm: int, sections: int, suture: str, directory: Path) -> dict[str, Any]:
    """One `suture batch` over ``sections`` sections at ``tpm``; the figures of one row."""
    docs, out = directory / "docs", directory / "out"
    _documents(docs, sections)
    config = directory / "limits.yaml"
    config.write_text(json.dumps({"limits": {m: {"rpm": RPM, "tpm": tpm} for m in MODELS}}))
    limits = [arg for m in MODELS for arg in ("--limit", f"{m}={RPM}/{tpm}")]
    with simulator_process("--profile", "realistic", "--latency-scale", "1", *limits) as url:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "OPENAI_", "REDIS_URL"))}
        env |= {
            "SUTURE_OPENAI_BASE_URL": url,
            "XDG_RUNTIME_DIR": tempfile.mkdtemp(dir=directory),
            "XDG_CACHE_HOME": tempfile.mkdtemp(dir=directory),
        }
        command = [suture, "--config", str(config), "batch", str(docs), "--out", str(out)]
        started = time.monotonic()
        # Run from the run's own folder: the stack's workers are `python -m celery`, which imports
        # `suture` from the working directory first, so from a checkout they would run its code.
        process = subprocess.Popen(
            command,
            cwd=directory,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=(directory / "batch.log").open("w"),
        )
        samples: list[tuple[float, int]] = []
        first: float | None = None
        while process.poll() is None:
            time.sleep(1.0)
            requests, _, served, _ = _totals(model_stats(url))
            now = time.monotonic() - started
            if requests and first is None:
                first = now
            if first is not None:
                samples.append((now - first, served))
        wall_s = time.monotonic() - started
        requests, limited, served, metered = _totals(model_stats(url))
    report = json.loads((out / "report.json").read_text())
    statuses = {s: report.get(s, 0) for s in ("delivered", "soft_delivered", "failed", "refused")}
    window = sustained(samples)
    return {
        "tpm": tpm,
        "sections": sections,
        "exit": process.returncode,
        "statuses": statuses,
        "requests": requests,
        "rate_limited": limited,
        "served": served,
        "metered": metered,
        "wall_s": round(wall_s, 1),
        "window_s": None if window is None else round(window[0], 1),
        "useful_per_min": None if window is None else round(window[1]),
        "provider_tokens": report.get("provider_tokens"),
    }


def _row(r: dict[str, Any]) -> str:
    lost = r["sections"] - sum(r["statuses"].values())
    share = r["rate_limited"] / r["requests"] if r["requests"] else 0.0
    ratio = r["served"] / r["metered"] if r["metered"] else 0.0
    useful = "-" if r["useful_per_min"] is None else f"{r['useful_per_min']:,}"
    x_tpm = "-" if r["useful_per_min"] is None else f"{r['useful_per_min'] / r['tpm']:.2f}"
    window = "-" if r["window_s"] is None else f"{r['window_s']:g}"
    delivered = f"{r['statuses']['delivered']} / {r['statuses']['soft_delivered']}"
    nano = (r.get("provider_tokens") or {}).get("gpt-5-nano")  # the batch report's view (None: not reported)
    deferred = "-" if nano is None else f"{nano['deferred_for_budget']} / {nano['deferred_for_budget_s']:g}"
    return (
        f"| {r['label']} | {r['tpm']:,} | {r['sections']} | {delivered} | {lost} | {r['requests']} | "
        f"{r['rate_limited']} ({share:.1%}) | {r['served']:,} | {r['metered']:,} | {ratio:.2f} | "
        f"{deferred} | {r['wall_s']:g} | {window} | {useful} | {x_tpm} | {r['load']} |"
    )


def _kept_rows(label: str, tpms: set[int]) -> list[dict[str, Any]]:
    """Rows of earlier runs (kept in the section as JSON), without the ones this run replaces."""
    text = RESULTS_FILE.read_text() if RESULTS_FILE.exists() else ""
    if TITLE not in text:
        return []
    section = text.split(TITLE, 1)[1].split("\n## ", 1)[0]
    marker = "<!-- rows: "
    if marker not in section:
        return []
    rows: list[dict[str, Any]] = json.loads(section.split(marker, 1)[1].split(" -->", 1)[0])
    return [r for r in rows if not (r["label"] == label and r["tpm"] in tpms)]


def write(rows: list[dict[str, Any]]) -> None:
    """Rewrite the section with every row, and the rows as JSON so a later run keeps them."""
    head = (
        "| run | TPM per model | sections | delivered / soft | lost | requests | 429s | served tokens "
        "| metered tokens | served ÷ metered | nano calls deferred for the budget / their wait s | wall s "
        "| sustained window s | useful tokens/min | x TPM | load |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    body = "\n".join(_row(r) for r in rows)
    text = f"""Machine: {machine()}.
`suture simulator` (**a simulation**, realistic profile, latency scale 1) meters gpt-5-nano and
gpt-5-mini at the TPM shown and {RPM:,} RPM each, as OpenAI does (prompt + `max_completion_tokens`
counted when a request arrives, never given back); `suture --config limits.yaml batch` with the same
`limits:` and every other setting default, over one-section documents of about 1,600 characters
(5 questions each), on the embedded stack it starts. Served: prompt + completion tokens of the
replies; metered: what the simulator's limits counted (the batch report's own counts, from the traces,
were equal to them in every `after` run). Deferrals: from the batch report (a call deferred twice
counts twice; the wait is the sum of the slots given). Sustained window: from one minute after the
first request (the full bucket a run starts with is spent) to the last sample below 95 % of the
final served total; useful tokens/min over it, x TPM of one model. Load: the 1-minute load average
when the run started (the machine is shared). Produced by `python -m bench.bench_tier`
(`--suture PATH --label before` for another checkout).

{head}
{body}

Goal (issue 36, at 40k and 200k TPM): useful tokens >= 0.5 x TPM over the sustained window,
429s <= 1 % of requests, none lost.

`before` rows: a checkout from before issue 36 (`--suture` of that checkout; this module's simulator;
the row here: main at bd85a6d, the commit this work was rebased on). Two causes, found by reproducing
the issue's run: the workers of the stack `suture batch` starts never read its `--config` file, so they kept
no limit at all and every call went out to meet a 429 (the
simulator refuses a request it cannot hold and counts it against the RPM; the worker deferred the call
for its `retry-after` and sent it again, to meet the next 429); and every call reserved the
16,000-token ceiling, so two or three calls filled a 40,000-token minute. `after` rows: the workers
read the file (`SUTURE_CONFIG`), and each call asks for its contract's expected reply x 1.5 + a reasoning
allowance (a 5-question quiz at low
effort: about 2,200 tokens; an options slice at minimal effort: about 100), a reply cut off by that
cap being sent again once with it doubled ("cut replies" in the batch report; none in these runs).
Served ÷ metered is what a binding TPM turns into useful tokens; at 3M TPM nothing binds and it is the
same ratio (the earlier "a binding TPM" section measured 0.22 at 3M TPM with the ceiling set to
4,000; at the default ceiling of 16,000 every quiz call metered ~17,000 tokens for ~2,500 served).

<!-- rows: {json.dumps(rows)} -->
"""
    write_section(TITLE.removeprefix("## "), text)


def main(argv: list[str] | None = None) -> int:
    """Run each TPM:SECTIONS, then rewrite the section; exit 1 if a 40k/200k run misses the goal."""
    parser = argparse.ArgumentParser(prog="bench.bench_tier")
    parser.add_argument("runs", nargs="*", default=list(DEFAULT_RUNS), help="TPM:SECTIONS")
    parser.add_argument("--suture", default=str(Path(sys.executable).with_name("suture")))
    parser.add_argument("--label", default="after")
    args = parser.parse_args(argv if argv is not None else [])
    plan = [tuple(int(x) for x in run.split(":")) for run in args.runs]
    results = []
    for tpm, sections in plan:
        load = round(os.getloadavg()[0], 2)
        with tempfile.TemporaryDirectory(prefix="bench-tier-") as folder:
            result = run_one(tpm, sections, args.suture, Path(folder))
        result |= {"label": args.label, "load": load}
        print(json.dumps(result), flush=True)
        results.append(result)
    write(_kept_rows(args.label, {r["tpm"] for r in results}) + results)
    missed = [
        r
        for r in results
        if args.label == "after"
        and r["tpm"] <= 200_000
        and (
            (r["useful_per_min"] or 0) < 0.5 * r["tpm"]
            or r["rate_limited"] > 0.01 * r["requests"]
            or sum(r["statuses"].values()) != r["sections"]
        )
    ]
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
