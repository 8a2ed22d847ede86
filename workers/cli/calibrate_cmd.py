"""``suture calibrate DOCS --model M``: measure a model's unknowns on a small sample, then pick a policy.

The simulator's repair rates are assumptions (workers/simulator/repair_skill.py, reask_skill.py); this
measures them on the configured OpenAI-compatible endpoint (``openai_base_url`` / ``OPENAI_API_KEY``):
the first attempt's failure rate per code, the slice fix rate, the whole re-ask's fix and keep rates
and the tokens per step, each with a 95 % interval (``suture.workers.batch.calibration``). It writes
them as a simulator profile file (``--out``; load it with ``simulator.profile_file``), then runs
``eval`` on the simulator with that profile over the same sections and names the policy that is
cheapest per valid quiz *for that model* (within ``--margin`` points of the best valid rate).

Without ``--yes`` it prints the planned calls and their estimated cost and calls no model. It stops
before a call whose estimate would pass ``--budget-usd``. Exit codes: 0 done (or planned), 2 unusable
input or no model endpoint configured.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import SecretStr

from suture.config.settings import Settings
from suture.contracts.registry import resolve_params
from suture.tasks.policy import Policy
from suture.workers.batch.calibration import Calibration, Calibrator, plan
from suture.workers.batch.evaluation import EvalCase, job_params, run_eval
from suture.workers.cli import UsageError
from suture.workers.cli.common import CONTRACT_HELP, contract_from, positive_int, settings_from
from suture.workers.documents import Section, iter_documents
from suture.workers.reports.eval_summary import suggest

DEFAULT_POLICIES = ("default", "full-only", "reask")
REASK_RETRIES = 3


def reask_policy(model: str, effort: str) -> dict[str, Any]:
    """What Instructor and pydantic-ai do, as a suture policy: a first attempt, then whole re-asks with
    the failures (``REASK_RETRIES``), all on the calibrated model; weighed against the default's surgery."""
    step = {"mode": "full", "model": model, "reasoning_effort": effort}
    return {
        "description": f"{model}@{effort}, then {REASK_RETRIES} whole re-asks with the failures (calibrate).",
        "feedback": True,
        "examples": True,
        "steps": [step] * (1 + REASK_RETRIES),
    }


def candidate_policies(names: Sequence[str], model: str, effort: str, settings: Settings) -> list[Policy]:
    """The policies calibrate chooses from: configured ones by name, and ``reask`` built for the model."""
    from suture.tasks.policy import load_policy, policy_from_mapping

    return [
        policy_from_mapping(name, reask_policy(model, effort), settings)
        if name == "reask" and name not in settings.policies
        else load_policy(name, settings)
        for name in names
    ]


def register(subparsers: Any) -> None:
    """Add the ``calibrate`` subcommand."""
    parser = subparsers.add_parser(
        "calibrate",
        help="measure a model's failure and repair rates, write a simulator profile, name its policy",
        description="Measure first-attempt failures, slice and re-ask fix rates and tokens on DOCS.",
    )
    parser.add_argument(
        "docs", nargs="+", metavar="DOCS", help="documents or folders to sample sections from"
    )
    parser.add_argument("--model", required=True, help="the model to measure (priced in settings.prices)")
    parser.add_argument("--effort", default="low", help="reasoning effort (minimal, low, medium, high)")
    parser.add_argument("--contract", default="quiz", help=CONTRACT_HELP)
    parser.add_argument("--budget-usd", type=float, default=None, help="stop before spending more than this")
    parser.add_argument("--yes", action="store_true", help="call the model (without it: only the plan)")
    parser.add_argument("--samples", type=positive_int, default=10, help="sections sampled (default 10)")
    parser.add_argument(
        "--max-slices", type=positive_int, default=5, help="slice repairs per quiz (default 5)"
    )
    parser.add_argument("--questions", type=positive_int, default=15, help="questions per quiz (default 15)")
    parser.add_argument("--seed", type=int, default=0, help="request seed")
    parser.add_argument("--out", metavar="FILE", help="the profile file (default calibration-MODEL.yaml)")
    parser.add_argument(
        "--policy",
        action="append",
        metavar="NAME",
        help="a policy to choose from (repeat; default: default, full-only, reask: whole re-asks on MODEL)",
    )
    parser.add_argument("--runs", type=positive_int, default=2, help="eval runs on the simulator (default 2)")
    parser.add_argument("--margin", type=float, default=2.0, help="valid-rate margin in points (default 2)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Plan, and with --yes measure, write the profile and name the cheapest policy."""
    settings = settings_from(args)
    contract = contract_from(args)
    if contract != "quiz":
        # The item-level rates (slices of /questions/i, imbalanced options) are the quiz contract's.
        raise UsageError(f"--contract {contract!r}: calibrate measures the quiz contract only")
    if args.model not in settings.prices:
        raise UsageError(
            f"--model {args.model!r} has no price in settings.prices: its cost cannot be measured"
        )
    if args.effort not in ("minimal", "low", "medium", "high"):
        raise UsageError(f"--effort {args.effort!r}: one of minimal, low, medium, high")
    if args.budget_usd is not None and args.budget_usd <= 0:
        raise UsageError(f"--budget-usd {args.budget_usd}: must be more than 0")
    if not 0 <= args.margin <= 100:
        raise UsageError(f"--margin {args.margin}: points between 0 and 100")
    sections = _sections(args.docs, settings, args.samples)
    params = resolve_params(contract, job_params(contract, args.questions), settings)
    planned = plan(sections, args.model, args.effort, args.questions, args.max_slices, settings)
    budget = f", stopping before ${args.budget_usd:.4f}" if args.budget_usd is not None else ""
    print(
        f"calibrate: {planned.sections} sections; at most {planned.calls} calls to "
        f"{args.model}@{args.effort} "
        f"({planned.first_calls} first attempts, up to {planned.slice_calls} slice repairs, "
        f"{planned.reask_calls} re-asks); estimated ${planned.estimate_usd:.4f}{budget}"
    )
    if not args.yes:
        print("calibrate: no model called; add --yes to run it")
        return 0
    if settings.openai_api_key is None and not settings.openai_base_url:
        raise UsageError(
            "calibrate measures a real model: set OPENAI_API_KEY (and openai_base_url for another endpoint)"
        )
    from suture.workers.model.client import get_model_client

    found = Calibration(args.model, args.effort, contract)
    calibrator = Calibrator(
        get_model_client(settings).call,
        settings,
        found,
        params=params,
        budget_usd=args.budget_usd,
        max_slices=args.max_slices,
        seed=args.seed,
    )
    calibrator.run(sections)
    _print(found)
    out = Path(args.out or f"calibration-{args.model}.yaml")
    out.write_text(yaml.safe_dump(found.profile_data(), sort_keys=False), encoding="utf-8")
    print(f"calibrate: wrote {out} (use it with simulator.profile_file)")
    if found.questions == 0:
        print("calibrate: no output was judged; no policy can be chosen", file=sys.stderr)
        return 0
    chosen = choose_policy(settings, out, sections, contract, args)
    print(
        f"calibrate: cheapest per valid quiz for {args.model} (on the simulator with these rates): {chosen}"
    )
    return 0


def choose_policy(settings: Settings, profile: Path, sections: list[str], contract: str, args: Any) -> str:
    """Run eval on the simulator loaded with ``profile`` and name the cheapest policy per valid quiz."""
    from suture.workers.model.client import get_model_client
    from suture.workers.simulator.configure import start_from_settings
    from suture.workers.simulator.errors import SimulatorError

    simulator = settings.simulator.model_copy(update={"profile_file": str(profile)})
    try:
        handle = start_from_settings(settings.model_copy(update={"simulator": simulator}), latency_scale=0)
    except SimulatorError as exc:
        return f"none (the simulator cannot play {args.model}: {exc})"
    try:
        # A placeholder key: the user's real one is never sent to the simulator.
        local = settings.model_copy(
            update={"openai_base_url": handle.base_url, "openai_api_key": SecretStr("sk-simulated")}
        )
        policies = candidate_policies(args.policy or DEFAULT_POLICIES, args.model, args.effort, local)
        cases = [EvalCase(f"section {i + 1}", text, args.questions) for i, text in enumerate(sections)]
        outcome = run_eval(
            cases,
            policies,
            get_model_client(local).call,
            local,
            runs=args.runs,
            simulated=True,
            contract=contract,
        )
    finally:
        handle.stop()
    summaries = outcome.summaries()
    for name, summary in summaries.items():
        cost = summary.cost_per_valid_usd
        per_valid = f"${cost:.6f} per valid quiz" if cost is not None else "no valid quiz"
        print(f"  {name}: valid {summary.valid_rate:.1%}, {per_valid}")
    return suggest(summaries, args.margin / 100).reason


def _sections(paths: list[str], settings: Settings, samples: int) -> list[str]:
    texts = [
        item.text
        for item in iter_documents([Path(p) for p in paths], settings.batch)
        if isinstance(item, Section)
    ]
    if not texts:
        raise UsageError(f"no readable section in {', '.join(paths)}")
    if len(texts) <= samples:
        return texts
    step = len(texts) / samples  # spread over the documents, not only the first one
    return [texts[int(i * step)] for i in range(samples)]


def _print(found: Calibration) -> None:
    figures = found.as_dict()
    stop = " (stopped by the budget)" if found.stopped_by_budget else ""
    print(f"calibrate: {found.calls} calls on {found.sections} sections, ${found.spent_usd:.4f} spent{stop}")
    print(f"  first attempt, failures per question ({found.questions} questions):")
    for code, rate in figures["first_attempt_failure_rate_per_question"].items():
        print(f"    {code}: {_rate(rate)}")
    for name in ("slice_fix_rate", "reask_fix_rate", "reask_keep_rate"):
        print(f"  {name.replace('_', ' ')}: {_rate(figures[name])}")
    for step, means in figures["tokens"].items():
        tokens = ", ".join(
            f"{k} {m['value']} [{m['ci95'][0]}, {m['ci95'][1]}]" for k, m in means.items() if m["ci95"]
        )
        print(f"  tokens per {step} call: {tokens}")


def _rate(rate: dict[str, Any]) -> str:
    if rate["value"] is None:
        return "not measured (no trial)"
    low, high = rate["ci95"]
    return f"{rate['value']:.3f} (95 % CI {low:.3f}-{high:.3f}, {rate['successes']}/{rate['trials']})"
