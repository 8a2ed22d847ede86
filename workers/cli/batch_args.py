"""``suture batch``'s arguments: their checks before any stack starts, and the batch options they make.

Every refusal is one line (``UsageError``, exit 2): a bad count, flags that do not go together, a
missing input, a contract file (a batch's workers know contracts by name), a policy or parameter
admission would refuse, an unusable ``--out``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from suture.config.settings import Settings
from suture.workers.batch.outputs import OUTPUT_NAMES
from suture.workers.batch.records import BatchOptions
from suture.workers.cli import UsageError
from suture.workers.cli.common import teaching_params
from suture.workers.local import discovery
from suture.workers.output_folder import OutputFolderError, check_out_dir


def questions_arg(text: str) -> int | None:
    """``--questions``: a whole number (checked in ``check_args``), or ``auto`` (None)."""
    if text.strip().lower() == "auto":
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a whole number or auto, got {text!r}") from None


def check_args(args: argparse.Namespace, settings: Settings, shared: discovery.StackAddress | None) -> None:
    """Refuse, in one line before any stack starts, what the batch could not run."""
    if args.questions is not None and args.questions < 1:
        raise UsageError(f"--questions must be at least 1, got {args.questions}")
    if args.concurrency is not None and args.concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1, got {args.concurrency}")
    if args.collect and args.inputs:
        raise UsageError("--collect takes no INPUT: it gathers the batch recorded in --out DIR")
    if args.dry_run and (args.collect or args.no_wait):
        raise UsageError(
            "--dry-run reads the inputs and estimates; it does not go with --collect or --no-wait"
        )
    if args.budget_usd is not None and not args.budget_usd > 0:
        raise UsageError(f"--budget-usd must be more than 0, got {args.budget_usd:g}")
    if not args.collect and not args.inputs:
        raise UsageError("give at least one INPUT file or folder (or --collect)")
    if (args.no_wait or args.collect) and not settings.broker_url and shared is None:
        raise UsageError(
            "--no-wait/--collect need a running cluster (SUTURE_BROKER_URL, or `suture up`); "
            "the embedded stack stops when this command exits"
        )
    for raw in args.inputs:
        if not Path(raw).exists() and not Path(raw).is_symlink():  # a link is reported, not "not found"
            raise UsageError(f"input not found: {raw}")
    from suture.workers.admission import check_request
    from suture.workers.batch.evaluation import job_params
    from suture.workers.cli.policy_arg import policy_arg
    from suture.workers.errors import InvalidJob

    if str(args.contract).lower().endswith((".yaml", ".yml", ".json")):
        raise UsageError(
            f"--contract {args.contract}: a batch's jobs name a contract its workers know; "
            "add the file under `contracts:` in suture.yaml"
        )
    try:  # a bad contract, policy or parameter is the user's to fix before any job runs
        chosen = policy_arg(args.policy, settings)  # a file is read here, never by a worker
        questions = args.questions or settings.batch.auto_questions.max_questions
        params = job_params(args.contract, questions) | teaching_params(args)
        check_request(args.contract, params, chosen.name, settings, chosen.rules)
    except InvalidJob as exc:
        raise UsageError(str(exc)) from None
    if not args.dry_run:  # a dry run writes nothing
        try:
            check_out_dir(args.out, OUTPUT_NAMES)  # before any stack starts or any document is read
        except OutputFolderError as exc:
            raise UsageError(f"--out: {exc}") from None


def batch_options(
    args: argparse.Namespace, settings: Settings, *, simulated: bool, carry: bool = False
) -> BatchOptions:
    """The batch's options from the command line (a policy file read here: its content goes with each job)."""
    from suture.workers.cli.policy_arg import policy_arg

    chosen = policy_arg(args.policy, settings)  # the file's content travels with each job
    return BatchOptions(
        inputs=tuple(args.inputs),
        follow_symlinks=args.follow_symlinks,
        out_dir=Path(args.out),
        questions=args.questions,
        policy=chosen.name,
        policy_rules=chosen.rules,
        jobs_in_flight=args.concurrency or _in_flight(args, settings),
        wait=not args.no_wait,
        simulated=simulated,
        budget_usd=args.budget_usd,
        contract=args.contract,
        knobs=teaching_params(args),
        carry=carry,
        batch_api=batch_api_mode(args, settings),
        priority=getattr(args, "priority", None) or "bulk",
    )


def _in_flight(args: argparse.Namespace, settings: Settings) -> int:
    """Jobs in flight: through the Batch API, every section at once (a round holds what waits)."""
    return (
        settings.batch_api.max_lines
        if batch_api_mode(args, settings) != "off"
        else settings.batch.jobs_in_flight
    )


def batch_api_mode(args: argparse.Namespace, settings: Settings) -> str:
    """``--batch-api`` (``all`` when given bare), else the setting ``batch_api.mode``."""
    return str(getattr(args, "batch_api", None) or settings.batch_api.mode)


def waiting_for_batches(settings: Settings, mode: str) -> Settings:
    """The batch's settings: waiting for a job as long as its Batch API deadline when it uses one."""
    if mode == "off":
        return settings
    timeout_s = max(settings.batch.job_timeout_s, settings.batch_api.job_deadline_s)
    return settings.model_copy(
        update={"batch": settings.batch.model_copy(update={"job_timeout_s": timeout_s})}
    )
