"""``suture generate FILE``: run one job (default: a quiz) on a document and print its result JSON.

``--inline`` drives the engine in this process (no broker); otherwise the job goes through Celery
(``workers.producer.enqueue``), on the configured broker or an embedded local stack. With no
model configured (no ``OPENAI_API_KEY``/``OPENAI_BASE_URL``) the built-in simulator is started
in-process, and stderr says so: its output is a simulation, never a real model's.

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
from typing import Any

from config.settings import Settings
from contracts.contract import Contract
from contracts.errors import ContractDefinitionError, UnknownContractError
from contracts.registry import contract_names, get_contract
from tasks.engine import EngineOptions, JobSpec
from tasks.policy import Policy, PolicyError, load_policy
from workers.cli import UsageError
from workers.cli.common import positive_int, settings_from

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
    parser.add_argument("file", metavar="FILE", help="the source document (.txt, .md or .pdf)")
    parser.add_argument("--contract", default="quiz", help=f"contract name ({', '.join(contract_names())})")
    parser.add_argument("--questions", metavar="N", type=positive_int, help="questions to write (default 15)")
    parser.add_argument("--policy", metavar="NAME|FILE", help="retry policy name or YAML file")
    parser.add_argument("--inline", action="store_true", help="run the engine in this process (no broker)")
    parser.add_argument("--out", metavar="PATH", help="write the result JSON here instead of stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the job, write the result, summarise it on stderr; 0 if an output was delivered."""
    settings = settings_from(args)
    source = read_document(Path(args.file), settings)
    contract = _contract(args.contract, args.questions, source, settings)
    policy = _policy(args.policy, settings)
    with _model_endpoint(settings) as (settings, simulated):
        if args.inline:
            final = _run_inline(contract, source, policy, settings, simulated)
        else:
            final = _run_queued(args, source, settings)
    _write(final, args.out)
    print(summary(final), file=sys.stderr)
    return 0 if final.get("status") in ("delivered", "soft_delivered") else 1


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


def read_document(path: Path, settings: Settings) -> str:
    """The document's text (all sections joined); unusable files are a UsageError."""
    from workers.documents import DocumentError, InputIssue, iter_documents

    if not path.is_file():
        raise UsageError(f"file not found: {path}")
    texts: list[str] = []
    try:
        for item in iter_documents([path], settings.batch):
            if isinstance(item, InputIssue):
                if item.skipped:
                    raise UsageError(str(item))
                continue
            texts.append(item.text)
    except DocumentError as exc:
        raise UsageError(str(exc)) from None
    if not texts:
        raise UsageError(f"{path}: no text to work from")
    return "\n\n".join(texts)


def _contract(name: str, questions: int | None, source: str, settings: Settings) -> Contract:
    params: dict[str, Any] = {"source": source}
    if questions is not None:
        params["questions"] = questions
    if name == "quiz":
        params["rules"] = settings.quiz
    try:
        return get_contract(name, **params)
    except (UnknownContractError, ContractDefinitionError) as exc:
        raise UsageError(str(exc)) from None


def _policy(name: str | None, settings: Settings) -> Policy:
    try:
        return load_policy(name, settings)
    except PolicyError as exc:
        raise UsageError(str(exc)) from None


@contextlib.contextmanager
def _model_endpoint(settings: Settings) -> Iterator[tuple[Settings, bool]]:
    """The settings to call the model with; starts the simulator if no model is configured."""
    if settings.openai_api_key is not None or settings.openai_base_url:
        yield settings, False
        return
    from workers.simulator import start_from_settings

    handle = start_from_settings(settings)
    print(SIMULATED_NOTICE.format(url=handle.base_url), file=sys.stderr)
    try:
        yield settings.model_copy(update={"openai_base_url": handle.base_url}), True
    finally:
        handle.stop()


def _run_inline(
    contract: Contract, source: str, policy: Policy, settings: Settings, simulated: bool
) -> dict[str, Any]:
    from tasks.runner import run_inline
    from workers.model_client import get_model_client

    spec = JobSpec(
        job_id=uuid.uuid4().hex,
        contract=contract.name,
        params=contract.params(),
        source=source,
        simulated=simulated,
        options=EngineOptions.from_settings(settings),
    )
    return run_inline(spec, policy, get_model_client(settings).call, settings)


def _run_queued(args: argparse.Namespace, source: str, settings: Settings) -> dict[str, Any]:
    from workers.producer import ProducerError, enqueue

    with _broker(settings) as settings:
        try:
            handle = enqueue(
                args.contract, source, questions=args.questions, policy=args.policy, settings=settings
            )
            return handle.result(timeout_s=settings.worker.job_deadline_s)
        except ProducerError as exc:
            raise UsageError(str(exc)) from None


@contextlib.contextmanager
def _broker(settings: Settings) -> Iterator[Settings]:
    """The configured broker, or an embedded local stack (Redis + one worker) for this one job."""
    if settings.broker_url:
        yield settings
        return
    from workers.stack import LocalStack

    print(
        "suture: no broker configured; starting an embedded local stack (use --inline to skip)",
        file=sys.stderr,
    )
    with LocalStack(settings) as started:
        yield started


def _write(final: dict[str, Any], out: str | None) -> None:
    text = json.dumps(final, ensure_ascii=False, indent=2) + "\n"
    if out is None:
        sys.stdout.write(text)
        return
    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
