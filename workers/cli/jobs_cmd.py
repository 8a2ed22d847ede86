"""``suture enqueue|status|result|trace|resume|cancel``: queue a job and follow it by id.

All read ``SUTURE_BROKER_URL`` / ``SUTURE_REDIS_URL`` through the settings, else use the running
``suture up`` of this user; with neither they exit 2 with one line naming the ways out.
``enqueue`` prints the job id alone on stdout, so scripts can capture it; ``status`` prints the
status alone on stdout, and on stderr, for a queued job, that no worker has been seen lately.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from suture.config.settings import Settings
from suture.tasks.dispatch_order import PRIORITY_CLASSES
from suture.workers.cli import UsageError
from suture.workers.cli.common import (
    add_follow_symlinks,
    add_teaching_flags,
    positive_int,
    producer_settings,
    read_document,
    refuse_symlink,
    teaching_params,
)
from suture.workers.errors import JobNotFound, JobTimeout, ProducerError

COMMANDS = ("enqueue", "status", "result", "trace", "resume", "cancel")


def register(subparsers: Any) -> None:
    """Add the six job subcommands."""
    _add_enqueue(subparsers)
    status = subparsers.add_parser("status", help="print a job's status")
    status.add_argument("job")
    status.add_argument(
        "--json", action="store_true", help='print {"job_id", "status", "priority", "callback"} instead'
    )
    status.set_defaults(func=run, job_command="status")
    trace = subparsers.add_parser("trace", help="print a job's attempts as JSON")
    trace.add_argument("job")
    trace.add_argument(
        "--spec",
        action="store_true",
        help='print {"spec": {contract, contract_params, policy, priority}, "attempts": [...]}',
    )
    trace.set_defaults(func=run, job_command="trace")
    result = subparsers.add_parser("result", help="wait for a job and print its result JSON")
    result.add_argument("job")
    result.add_argument("--timeout", type=float, help="seconds to wait (default: forever)")
    result.set_defaults(func=run, job_command="result")
    resume = subparsers.add_parser(
        "resume",
        help="re-run a soft-delivered job with feedback, or regenerate only --target parts of it",
        description="With --target (repeatable, a JSON pointer such as /questions/13) only those parts are "
        "regenerated, the rest stays byte-identical; without, the job's whole chain runs again. With "
        "--out DIR the job is a batch's, read from DIR (no stack needed; quizzes.jsonl is updated).",
    )
    resume.add_argument("job")
    resume.add_argument("--feedback", required=True)
    resume.add_argument("--target", action="append", default=[], metavar="POINTER", help="e.g. /questions/13")
    resume.add_argument("--out", metavar="DIR", help="the output folder of the batch that made the job")
    resume.set_defaults(func=run, job_command="resume")
    cancel = subparsers.add_parser(
        "cancel",
        help="stop a job that has not finished",
        description="Store a cancelled result for JOB now; its remaining tasks stop. Exit 1 if it had "
        "finished.",
    )
    cancel.add_argument("job")
    cancel.add_argument("--reason", default=None, help="why (kept in the result's reason)")
    cancel.set_defaults(func=run, job_command="cancel")


def _add_enqueue(subparsers: Any) -> None:
    """Add ``suture enqueue``."""
    enqueue = subparsers.add_parser("enqueue", help="queue a generation job; prints its id")
    enqueue.add_argument("file", help="source document (.txt, .md or .pdf; '-' reads stdin)")
    enqueue.add_argument(
        "--contract", default="quiz", help="contract name the workers know (`suture contracts` lists them)"
    )
    enqueue.add_argument("--questions", type=positive_int)
    add_follow_symlinks(enqueue)
    enqueue.add_argument(
        "--policy",
        metavar="NAME|FILE",
        help="a configured policy, or a YAML file read here and stored with the job",
    )
    add_teaching_flags(enqueue)
    enqueue.add_argument("--idempotency-key", help="the same key and request give the same job (per tenant)")
    enqueue.add_argument(
        "--tenant", help="whom the job is for: scopes --idempotency-key and is stored with the job"
    )
    enqueue.add_argument("--callback", help="https URL the result is POSTed to (signed), when the job ends")
    enqueue.add_argument(
        "--priority",
        choices=PRIORITY_CLASSES,
        default="interactive",
        help="the job's class (bulk waits behind interactive)",
    )
    enqueue.set_defaults(func=run, job_command="enqueue")


def run(args: argparse.Namespace) -> int:
    """Run one job subcommand; store, broker and argument problems exit 2 with one line."""
    from suture.config.settings import ConfigError
    from suture.workers import producer
    from suture.workers.runtime.app import CeleryConfigError

    if args.job_command == "resume" and args.out:  # a batch's job, from its folder: no store needed
        from suture.workers.cli.common import settings_from

        return _resume(args, settings_from(args), None)
    if args.job_command == "enqueue" and str(args.contract).lower().endswith((".yaml", ".yml", ".json")):
        raise UsageError(
            f"--contract {args.contract}: a queued job names a contract its workers know; "
            "add the file under `contracts:` in suture.yaml (or run `suture generate --inline`)"
        )
    settings = producer_settings(args)
    try:
        return _COMMANDS[args.job_command](args, settings, producer)
    except JobTimeout as exc:
        print(f"suture: {exc}", file=sys.stderr)
        return 1
    except (ConfigError, CeleryConfigError, ProducerError) as exc:
        raise UsageError(str(exc)) from None


def _enqueue(args: argparse.Namespace, settings: Any, producer: Any) -> int:
    refuse_symlink(args.file, args)  # before it is read: a link could carry a secret to the model
    if args.file != "-" and not Path(args.file).exists():
        raise UsageError(f"no such file: {args.file}")
    from suture.workers.cli.policy_arg import policy_arg

    chosen = policy_arg(args.policy, settings)  # a file is read here, on the producer's machine
    text = read_document(args.file, settings)  # as `generate` and `batch` read documents (.pdf too)
    handle = producer.enqueue(
        args.contract,
        text,
        questions=args.questions,
        params=teaching_params(args),
        policy=chosen.name,
        policy_rules=chosen.rules,
        idempotency_key=args.idempotency_key,
        tenant=args.tenant,
        priority=args.priority,
        callback=args.callback,
        settings=settings,
    )
    print(handle.id)
    return 0


def _status(args: argparse.Namespace, settings: Any, producer: Any) -> int:
    handle = producer.get_job(args.job, settings)
    status = handle.status()
    callback = handle.callback()
    shown = {"job_id": handle.id, "status": status, "priority": handle.spec()["priority"]}
    print(json.dumps(shown | ({"callback": callback} if callback else {})) if args.json else status)
    if callback and not args.json:  # stdout stays the status alone, for scripts
        print(f"callback: {describe_delivery(callback)}", file=sys.stderr)
    _warn_if_nothing_consumes(status, settings)
    return 0


def describe_delivery(callback: dict[str, Any]) -> str:
    """A callback's delivery in a few words: ``failed after 6 attempts (last: HTTP 500)``."""
    last = f"HTTP {callback['last_status']}" if callback.get("last_status") else callback.get("last_error")
    attempts = int(callback.get("attempts") or 0)
    done = f"{callback['state']} after {attempts} attempt{'s' if attempts != 1 else ''}"
    return done + (f" (last: {last})" if last and callback["state"] != "delivered" else "")


def _warn_if_nothing_consumes(status: str, settings: Settings) -> None:
    """For a queued job, say on stderr when no worker has beaten lately: nothing would ever run it."""
    from suture.workers.store.job_store import get_store
    from suture.workers.store.watchlist import WORKER_SILENT_BEATS

    if status != "queued":
        return
    silent_s = WORKER_SILENT_BEATS * settings.worker.watchdog_interval_s
    seen = get_store(settings).watchlist.last_worker_seen()
    if seen is None or time.time() - seen > silent_s:
        print(
            f"suture: no worker has been seen in the last {silent_s:g} s: nothing is consuming the queue; "
            "start `suture up`, or `suture worker` with the same broker settings",
            file=sys.stderr,
        )


def _result(args: argparse.Namespace, settings: Any, producer: Any) -> int:
    handle = producer.get_job(args.job, settings)
    try:
        _print_json(handle.result(timeout_s=args.timeout))
    except JobTimeout:
        _warn_if_nothing_consumes(handle.status(), settings)
        raise
    return 0


def _trace(args: argparse.Namespace, settings: Any, producer: Any) -> int:
    handle = producer.get_job(args.job, settings)
    attempts = handle.trace()
    _print_json({"spec": handle.spec(), "attempts": attempts} if args.spec else attempts)
    return 0


def _resume(args: argparse.Namespace, settings: Any, producer: Any) -> int:
    if args.out:
        from suture.workers.cli.resume_batch import resume_from_out

        return resume_from_out(args, settings)
    try:
        handle = producer.resume(args.job, args.feedback, targets=args.target, settings=settings)
    except JobNotFound:
        raise UsageError(
            f"no such job: {args.job}; for a job of a batch, give its output folder: --out DIR"
        ) from None
    print(handle.id)
    return 0


def _cancel(args: argparse.Namespace, settings: Any, producer: Any) -> int:
    reason = args.reason or producer.CANCEL_REASON
    if producer.cancel(args.job, reason, settings=settings):
        print("cancelled")
        return 0
    status = producer.get_job(args.job, settings).status()
    print(f"suture: job {args.job} had already finished ({status}); nothing changed", file=sys.stderr)
    return 1


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


_COMMANDS = {
    "enqueue": _enqueue,
    "status": _status,
    "result": _result,
    "trace": _trace,
    "resume": _resume,
    "cancel": _cancel,
}
