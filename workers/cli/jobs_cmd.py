"""``suture enqueue|status|result|trace|resume|cancel``: queue a job and follow it by id.

All read ``SUTURE_BROKER_URL`` / ``SUTURE_REDIS_URL`` through the settings. ``enqueue`` prints
the job id alone on stdout, so scripts can capture it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from workers.cli import UsageError

COMMANDS = ("enqueue", "status", "result", "trace", "resume", "cancel")


def register(subparsers: Any) -> None:
    """Add the six job subcommands."""
    enqueue = subparsers.add_parser("enqueue", help="queue a generation job; prints its id")
    enqueue.add_argument("file", help="source document (text file)")
    enqueue.add_argument("--contract", default="quiz")
    enqueue.add_argument("--questions", type=int)
    enqueue.add_argument("--policy")
    enqueue.add_argument("--idempotency-key")
    enqueue.set_defaults(func=run, job_command="enqueue")
    for name, text in (("status", "print a job's status"), ("trace", "print a job's attempts as JSON")):
        parser = subparsers.add_parser(name, help=text)
        parser.add_argument("job")
        parser.set_defaults(func=run, job_command=name)
    result = subparsers.add_parser("result", help="wait for a job and print its result JSON")
    result.add_argument("job")
    result.add_argument("--timeout", type=float, help="seconds to wait (default: forever)")
    result.set_defaults(func=run, job_command="result")
    resume = subparsers.add_parser("resume", help="re-run a soft-delivered job with feedback")
    resume.add_argument("job")
    resume.add_argument("--feedback", required=True)
    resume.set_defaults(func=run, job_command="resume")
    cancel = subparsers.add_parser(
        "cancel",
        help="stop a job that has not finished",
        description="Store a cancelled result for JOB now; its remaining tasks stop. Exit 1 if it had finished.",
    )
    cancel.add_argument("job")
    cancel.add_argument("--reason", default=None, help="why (kept in the result's reason)")
    cancel.set_defaults(func=run, job_command="cancel")


def run(args: argparse.Namespace) -> int:
    """Run one job subcommand; store, broker and argument problems exit 2 with one line."""
    from config.settings import ConfigError, load_settings
    from workers import producer
    from workers.celery_app import CeleryConfigError
    from workers.store import StoreError

    try:
        settings = load_settings(args.config)
        return _COMMANDS[args.job_command](args, settings, producer)
    except producer.JobTimeout as exc:
        print(f"suture: {exc}", file=sys.stderr)
        return 1
    except (ConfigError, CeleryConfigError, StoreError, producer.ProducerError) as exc:
        raise UsageError(str(exc)) from None


def _enqueue(args: argparse.Namespace, settings: Any, producer: Any) -> int:
    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path} as UTF-8 text: {type(exc).__name__}") from None
    handle = producer.enqueue(
        args.contract,
        text,
        questions=args.questions,
        policy=args.policy,
        idempotency_key=args.idempotency_key,
        settings=settings,
    )
    print(handle.id)
    return 0


def _status(args: argparse.Namespace, settings: Any, producer: Any) -> int:
    print(producer.get_job(args.job, settings).status())
    return 0


def _result(args: argparse.Namespace, settings: Any, producer: Any) -> int:
    _print_json(producer.get_job(args.job, settings).result(timeout_s=args.timeout))
    return 0


def _trace(args: argparse.Namespace, settings: Any, producer: Any) -> int:
    _print_json(producer.get_job(args.job, settings).trace())
    return 0


def _resume(args: argparse.Namespace, settings: Any, producer: Any) -> int:
    print(producer.resume(args.job, args.feedback, settings=settings).id)
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
