"""``suture eval DATASET``: compare retry policies on a folder of documents by quality, cost and latency.

Every policy runs over every document section (``--runs`` times, request seeds differing), inline
through the engine with the real model client, ``--concurrency`` jobs at a time. With no model
configured the built-in simulator is started in-process (stderr says so) and the results are
marked ``simulated``. Writes ``eval.json`` and ``eval.html`` to ``--out`` and prints the table.

``--compare-fixers`` also runs each policy with its deterministic fixers off (``<policy>~no-fixers``).
``--suggest`` also runs one-change variants of the given policies (drop a step, swap a model for
another priced model, add a surgical step) and names the cheapest policy whose valid rate is
within ``--margin`` percentage points of the best, with the figures that justify it.

Exit codes: 0 compared, 1 some jobs crashed (listed on stderr), 2 unusable input (one line).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from suture.config.settings import Settings
from suture.contracts.registry import resolve_params
from suture.tasks.policy import Policy
from suture.tasks.policy_variants import variants
from suture.workers.batch.evaluation import (
    EvalError,
    EvalRun,
    job_params,
    load_dataset,
    run_eval,
    settings_note,
)
from suture.workers.cli import UsageError
from suture.workers.cli.common import CONTRACT_HELP, contract_from, positive_int, settings_from
from suture.workers.local import shutdown
from suture.workers.output_folder import OutputFolder, OutputFolderError, check_out_dir
from suture.workers.reports.eval_html import print_table, render_html
from suture.workers.reports.eval_summary import PolicySummary, suggest

DEFAULT_POLICIES = ("full-only", "default")
SIMULATED_NOTICE = (
    "suture: no OPENAI_API_KEY/OPENAI_BASE_URL configured; evaluating against the built-in SIMULATOR "
    "at {url} (latency scale {scale:g}); results are marked simulated, not a real model's"
)


def register(subparsers: Any) -> None:
    """Add the ``eval`` subcommand."""
    parser = subparsers.add_parser(
        "eval",
        help="compare retry policies on a folder of documents",
        description="Run each policy over every document of DATASET and compare quality, cost and latency.",
    )
    parser.add_argument("dataset", metavar="DATASET", help="folder of .pdf/.md/.txt (optional expected.yaml)")
    parser.add_argument(
        "--policy",
        action="append",
        metavar="NAME|FILE",
        help=f"a policy to compare (repeat; default: {' and '.join(DEFAULT_POLICIES)})",
    )
    parser.add_argument("--contract", default="quiz", help=CONTRACT_HELP)
    parser.add_argument("--runs", type=positive_int, default=1, help="repetitions with different seeds")
    parser.add_argument("--out", metavar="DIR", default="eval-out", help="where eval.json and eval.html go")
    parser.add_argument("--questions", type=positive_int, default=15, help="questions per quiz (default 15)")
    parser.add_argument("--suggest", action="store_true", help="also try simple variants; name the cheapest")
    parser.add_argument(
        "--compare-fixers",
        action="store_true",
        help="also run each policy with its deterministic fixers turned off (named <policy>~no-fixers)",
    )
    parser.add_argument(
        "--margin", type=_margin, default=2.0, help="valid-rate margin for --suggest, in points (default 2)"
    )
    parser.add_argument("--concurrency", type=positive_int, default=8, help="jobs run at once (default 8)")
    parser.add_argument(
        "--latency-scale", type=_scale, default=None, help="simulator latency multiplier (0 = instant)"
    )
    parser.set_defaults(func=run)


OUTPUT_NAMES = ("eval.json", "eval.html")


def run(args: argparse.Namespace) -> int:
    """Run the comparison, print it, write eval.json and eval.html; see the module doc for exit codes."""
    settings = settings_from(args)
    contract = contract_from(args)
    policies = _policies(args.policy or list(DEFAULT_POLICIES), settings, contract, args.questions)
    if args.compare_fixers:
        policies = with_and_without_fixers(policies)
    folder = Path(args.dataset)
    dataset = _dataset(folder, settings, args.questions)
    for issue in dataset.issues:
        print(f"suture: {issue}", file=sys.stderr)
    out_dir = _out_dir(Path(args.out))
    shutdown.current().farewell(lambda: _farewell(out_dir))
    with _model_endpoint(settings, args.latency_scale) as (settings, simulated, scale):
        from suture.workers.model.client import get_model_client

        caller = get_model_client(settings).call
        extra = variants(policies, sorted(settings.prices)) if args.suggest else []
        if extra:
            print(f"suture: --suggest: also running {len(extra)} one-change variants", file=sys.stderr)
        tried = [*policies, *extra]
        outcome = run_eval(
            dataset.cases,
            tried,
            caller,
            settings,
            runs=args.runs,
            concurrency=args.concurrency,
            simulated=simulated,
            contract=contract,
        )
    note = settings_note(
        settings,
        contract=contract,
        contract_params=resolve_params(contract, job_params(contract, args.questions), settings),
        simulated=simulated,
        dataset=str(folder),
        documents=len({c.label.split(" §")[0] for c in dataset.cases}),
        sections=len(dataset.cases),
        runs=args.runs,
        questions=args.questions,
        jobs_per_policy=len(dataset.cases) * args.runs,
        concurrency=args.concurrency,
        latency_scale=scale,
    )
    report = build_report(outcome, policies, note, simulated, args.margin / 100 if args.suggest else None)
    _write(out_dir, report)
    print_table(report, Console(width=160))
    print(f"suture: wrote {out_dir / 'eval.json'} and {out_dir / 'eval.html'}", file=sys.stderr)
    for error in outcome.errors:
        print(f"suture: job crashed: {error}", file=sys.stderr)
    return 1 if outcome.errors else 0


def _farewell(out_dir: Path) -> str:
    rerun = shutdown.current().rerun()
    return (
        f"suture eval: interrupted; nothing was written ({out_dir / 'eval.json'} and eval.html come once "
        f"every job has run); to go on, rerun: {rerun}"
    )


def build_report(
    outcome: EvalRun,
    given: Sequence[Policy],
    note: dict[str, Any],
    simulated: bool,
    margin: float | None,
) -> dict[str, Any]:
    """eval.json: given policies, variants (with --suggest), the suggestion, settings, crashes."""
    summaries = outcome.summaries()
    names = [p.name for p in given]
    report: dict[str, Any] = {
        "policies": {n: summaries[n].as_dict() for n in names if n in summaries},
        "variants": {n: s.as_dict() for n, s in summaries.items() if n not in names},
        "simulated": simulated,
        "settings": note,
        "errors": outcome.errors,
    }
    if margin is not None and summaries:
        report["suggestion"] = suggest(summaries, margin).as_dict()
        report["suggestion"]["figures"] = _figures(summaries)
    return report


def with_and_without_fixers(policies: Sequence[Policy]) -> list[Policy]:
    """Each policy, followed by a copy with its fixers off (``<name>~no-fixers``) if it runs them."""
    both: list[Policy] = []
    for policy in policies:
        both.append(policy)
        if policy.fixers:
            both.append(dataclasses.replace(policy, name=f"{policy.name}~no-fixers", fixers=False))
    return both


def _figures(summaries: dict[str, PolicySummary]) -> dict[str, dict[str, Any]]:
    return {
        n: {"valid_rate": s.valid_rate, "cost_per_valid_usd": s.cost_per_valid_usd}
        for n, s in summaries.items()
    }


def _policies(names: Sequence[str], settings: Settings, contract: str, questions: int) -> list[Policy]:
    from suture.workers.admission import check_request
    from suture.workers.errors import InvalidJob

    policies: list[Policy] = []
    from suture.workers.cli.policy_arg import policy_arg

    for name in names:
        chosen = policy_arg(name, settings)  # a configured name, or a YAML file read here
        try:  # what enqueue would refuse: the parameters, an unknown policy, one that does not fit
            request = check_request(
                contract, job_params(contract, questions), chosen.name, settings, chosen.rules
            )
            policy = request.policy
        except InvalidJob as exc:
            raise UsageError(str(exc)) from None
        if any(p.name == policy.name for p in policies):
            raise UsageError(f"policy {policy.name!r} is given twice")
        _check_priced(policy, settings)
        policies.append(policy)
    return policies


def _check_priced(policy: Policy, settings: Settings) -> None:
    # Comparing policies is comparing costs: a model without a price would make every figure "unknown".
    for index, step in enumerate(policy.steps):
        if step.model not in settings.prices:
            known = ", ".join(sorted(settings.prices)) or "none"
            raise UsageError(
                f"policy {policy.name!r}, step {index + 1}: model {step.model!r} has no price "
                f"in settings.prices (priced: {known})"
            )


def _dataset(folder: Path, settings: Settings, questions: int) -> Any:
    try:
        return load_dataset(folder, settings, questions)
    except EvalError as exc:
        raise UsageError(str(exc)) from None


def _out_dir(path: Path) -> Path:
    """The output folder, checked before the model endpoint starts (no link followed, one line if
    unusable)."""
    try:
        return check_out_dir(path, OUTPUT_NAMES)
    except OutputFolderError as exc:
        raise UsageError(f"--out: {exc}") from None


def _write(out_dir: Path, report: dict[str, Any]) -> None:
    folder = OutputFolder(out_dir)
    try:
        folder.write_text("eval.json", json.dumps(report, indent=2) + "\n")
        folder.write_text("eval.html", render_html(report))
    except OutputFolderError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot write to {out_dir}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def _model_endpoint(
    settings: Settings, latency_scale: float | None
) -> Iterator[tuple[Settings, bool, float | None]]:
    """The settings to call the model with; starts the simulator if no model is configured."""
    if settings.openai_api_key is not None or settings.openai_base_url:
        if latency_scale is not None:
            raise UsageError("--latency-scale applies to the simulator only, and a model is configured")
        yield settings, False, None
        return
    from suture.workers.simulator import start_from_settings

    scale = settings.simulator.latency_scale if latency_scale is None else latency_scale
    handle = start_from_settings(settings, latency_scale=scale)
    print(SIMULATED_NOTICE.format(url=handle.base_url, scale=scale), file=sys.stderr)  # where it listens
    try:
        yield settings.model_copy(update={"openai_base_url": handle.base_url}), True, scale
    finally:
        handle.stop()


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a number, got {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"expects a finite number, got {text!r}")
    return value


def _margin(text: str) -> float:
    value = _number(text)
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"must be between 0 and 100 points, got {value:g}")
    return value


def _scale(text: str) -> float:
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value:g}")
    return value
