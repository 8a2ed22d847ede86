"""``suture generate FILE``: run one job (default: a quiz) on a document and print its result JSON.

``--inline`` drives the engine in this process (no broker); otherwise the job goes through Celery
(``suture.workers.producer.enqueue``), on the configured broker, else a running ``suture up``, else
an embedded local stack started for this job. With no model configured (no
``OPENAI_API_KEY``/``OPENAI_BASE_URL``) the inline run or the embedded stack starts the built-in
simulator in-process, and stderr says so: its output is a simulation, never a real model's.
Interrupted, it says in one line whether its job goes on somewhere (``suture result JOB``).

Exit codes: 0 delivered or soft-delivered, 1 refused or failed, 2 unusable input (one line).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from suture.config.settings import Settings
from suture.tasks.vocabulary import DELIVERED_STATUSES
from suture.workers.cli import UsageError
from suture.workers.cli.common import (
    CONTRACT_HELP,
    add_follow_symlinks,
    add_teaching_flags,
    contract_from,
    positive_int,
    read_document,
    refuse_symlink,
    settings_from,
    teaching_params,
)
from suture.workers.local import shutdown

if TYPE_CHECKING:
    from suture.workers.admission import Admission

SIMULATED_NOTICE = (
    "suture: no OPENAI_API_KEY/OPENAI_BASE_URL configured; using the built-in SIMULATOR "
    "at {url} (simulated output, not a real model)"
)


def register(subparsers: Any) -> None:
    """Add the ``generate`` subcommand."""
    parser = subparsers.add_parser(
        "generate",
        help="generate one contract-checked output (a quiz) from a document",
        description="Run one job on FILE and print the result JSON (status, output, failures, attempts).",
    )
    parser.add_argument(
        "file", metavar="FILE", help="the source document (.txt, .md or .pdf; '-' reads stdin)"
    )
    parser.add_argument("--contract", default="quiz", help=CONTRACT_HELP)
    add_follow_symlinks(parser)
    parser.add_argument("--questions", metavar="N", type=positive_int, help="questions to write (default 15)")
    parser.add_argument(
        "--policy",
        metavar="NAME|FILE",
        help="a configured policy, or a YAML file read here and stored with the job",
    )
    add_teaching_flags(parser)
    parser.add_argument("--inline", action="store_true", help="run the engine in this process (no broker)")
    parser.add_argument("--out", metavar="PATH", help="write the result JSON here instead of stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the job, write the result, summarise it on stderr; 0 if an output was delivered."""
    from suture.workers.cli.policy_arg import policy_arg

    settings = settings_from(args)
    args.contract = contract_from(args)
    _check_out(args.out)  # before any model or stack starts
    args.policy_choice = policy_arg(args.policy, settings)  # a file is read here, never by a worker
    refuse_symlink(args.file, args)  # before it is read: a link could carry a secret to the model
    source = read_document(args.file, settings)
    admitted = _admit(args, source, settings)  # what enqueue checks, before a simulator or stack starts
    farewell = _Farewell(shutdown.current())
    if args.inline:
        with _model_endpoint(settings) as (settings, simulated):
            final = _run_inline(admitted, settings, simulated)
    else:
        final = _run_queued(args, source, settings, farewell)
    _write(final, args.out)
    print(summary(final), file=sys.stderr)
    return 0 if final.get("status") in DELIVERED_STATUSES else 1


class _Farewell:
    """The one line an interrupted ``generate`` prints: where its job is, if anywhere, and how to go on."""

    def __init__(self, stop: shutdown.Shutdown) -> None:
        self.stop = stop
        self.job_id: str | None = None
        self.where: str | None = None  # None: the job ran inline, or on a stack that stopped with it
        stop.farewell(self.line)

    def line(self) -> str:
        if self.job_id and self.where:
            return (
                f"suture generate: interrupted; job {self.job_id} keeps running on {self.where}; "
                f"its result: suture result {self.job_id}"
            )
        return f"suture generate: interrupted; no result was kept; to go on, rerun: {self.stop.rerun()}"


def summary(final: dict[str, Any]) -> str:
    """One line for humans: status, attempts, failures left, cost, latency, simulated or not."""
    cost = final.get("cost_usd")
    cost_text = "unknown cost" if cost is None else f"${cost:.6f}"
    label = " [SIMULATED]" if final.get("simulated") else ""
    return (
        f"suture: {final.get('status')} after {len(final.get('attempts', []))} attempt(s), "
        f"{len(final.get('failures', []))} failure(s) left, {cost_text}, "
        f"{final.get('latency_ms', 0) / 1000:.1f} s model time{label}: {final.get('reason')}"
    )


def _admit(args: argparse.Namespace, source: str, settings: Settings) -> Admission:
    """The job as ``enqueue`` would store it (contract, complete params, policy, input and size checked)."""
    from suture.workers.admission import admit
    from suture.workers.errors import InvalidJob

    params = teaching_params(args) | ({"questions": args.questions} if args.questions is not None else {})
    try:
        chosen = args.policy_choice
        return admit(
            uuid.uuid4().hex,
            args.contract,
            source,
            settings,
            params=params,
            policy=chosen.name,
            policy_rules=chosen.rules,
        )
    except InvalidJob as exc:
        raise UsageError(str(exc)) from None


@contextlib.contextmanager
def _model_endpoint(settings: Settings) -> Iterator[tuple[Settings, bool]]:
    """The settings to call the model with; starts the simulator if no model is configured."""
    if settings.openai_api_key is not None or settings.openai_base_url:
        yield settings, False
        return
    from suture.workers.simulator import start_from_settings

    handle = start_from_settings(settings)
    print(SIMULATED_NOTICE.format(url=handle.base_url), file=sys.stderr)
    try:
        yield settings.model_copy(update={"openai_base_url": handle.base_url}), True
    finally:
        handle.stop()


def _run_inline(admitted: Admission, settings: Settings, simulated: bool) -> dict[str, Any]:
    from suture.tasks.runner import run_inline
    from suture.workers.model.client import get_model_client

    spec = admitted.spec.model_copy(update={"simulated": simulated})
    return run_inline(spec, admitted.policy, get_model_client(settings).call, settings)


def _run_queued(
    args: argparse.Namespace, source: str, settings: Settings, farewell: _Farewell
) -> dict[str, Any]:
    from suture.workers.errors import ProducerError
    from suture.workers.producer import enqueue

    with _broker(settings, farewell) as settings:
        try:
            handle = enqueue(
                args.contract,
                source,
                questions=args.questions,
                params=teaching_params(args),
                policy=args.policy_choice.name,
                policy_rules=args.policy_choice.rules,
                settings=settings,
            )
            farewell.job_id = handle.id
            return handle.result(timeout_s=settings.worker.job_deadline_s)
        except ProducerError as exc:
            raise UsageError(str(exc)) from None


@contextlib.contextmanager
def _broker(settings: Settings, farewell: _Farewell) -> Iterator[Settings]:
    """The configured broker, a running `suture up`, or an embedded stack (Redis + workers) for this one
    job."""
    from suture.workers.local import discovery

    if settings.broker_url:
        farewell.where = "the cluster"
        yield settings
        return
    shared = None if discovery.configured(settings) else discovery.find()
    if shared is not None:
        farewell.where = "the local stack of `suture up`"
        yield shared.applied_to(settings)
        return
    from suture.workers.local.stack import LocalStack

    print(
        "suture: no broker configured; starting an embedded local stack (use --inline to skip)",
        file=sys.stderr,
    )
    stack = LocalStack(settings)
    with stack as started:
        if stack.simulator is not None:
            print(SIMULATED_NOTICE.format(url=stack.simulator.base_url), file=sys.stderr)
        yield started


def _check_out(out: str | None) -> None:
    if out is None:
        return
    path = Path(out)
    if path.is_dir():
        raise UsageError(f"--out: {out} is a folder; name a file")
    if not path.parent.is_dir():
        raise UsageError(f"--out: no folder {path.parent} to write {path.name} in")


def _write(final: dict[str, Any], out: str | None) -> None:
    text = json.dumps(final, ensure_ascii=False, indent=2) + "\n"
    if out is None:
        sys.stdout.write(text)
        return
    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
