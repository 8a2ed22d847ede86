"""``suture eval``'s runner: every policy over every document of a dataset, inline, documents in parallel.

A dataset is a folder of course documents read by ``suture.workers.documents`` (each section is one quiz
job), with an optional sidecar ``expected.yaml`` of per-file expectations::

    # keys are file paths relative to the dataset folder
    photosynthesis.md:
      questions: 5             # quiz size for this file's sections (default: --questions)
      status: [delivered]      # acceptable final statuses; the met share is reported per policy

Each (policy, run, section) job runs through ``suture.tasks.runner.run_inline`` with the real model client;
run ``r`` sends request seed ``settings.simulator.seed + r`` so repetitions differ. Statistics are
``suture.workers.reports.eval_summary``'s; the report files are ``suture.workers.reports.eval_html``'s.

Errors::

    EvalError(Exception)     the evaluation cannot run (no documents, bad expected.yaml); one line
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from suture.config.settings import Settings
from suture.contracts.errors import ContractError
from suture.contracts.registry import contract_class, resolve_params
from suture.tasks.calls import ModelCall, ModelReply
from suture.tasks.policy import Policy
from suture.tasks.runner import run_inline
from suture.tasks.spec import EngineOptions, JobSpec
from suture.tasks.vocabulary import FinalStatus
from suture.workers.documents import DocumentError, InputIssue, Section, iter_documents
from suture.workers.reports.eval_summary import JobOutcome, PolicySummary, summarise

CONTRACT = "quiz"
EXPECTED_FILE = "expected.yaml"
Caller = Callable[[ModelCall], ModelReply]


class EvalError(Exception):
    """The evaluation cannot run as asked; str() is one line for the user."""


class Expectation(BaseModel):
    """What one dataset file is expected to give (all optional)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    questions: int | None = Field(None, ge=1, le=100)
    status: list[FinalStatus] = Field(default_factory=list)


@dataclass(frozen=True)
class EvalCase:
    """One quiz job's input: a section of a dataset document and what is expected of it."""

    label: str
    text: str
    questions: int
    expected: tuple[str, ...] = ()


@dataclass
class Dataset:
    """The cases of a dataset folder and the files skipped (with their reasons)."""

    cases: list[EvalCase]
    issues: list[InputIssue] = field(default_factory=list)


def load_dataset(folder: Path, settings: Settings, questions: int) -> Dataset:
    """Read the dataset folder into cases (one per section); unreadable files become issues."""
    if not folder.is_dir():
        raise EvalError(f"dataset is not a folder: {folder}")
    expectations = _expectations(folder)
    dataset = Dataset(cases=[])
    try:
        for item in iter_documents([folder], settings.batch):
            if isinstance(item, InputIssue):
                dataset.issues.append(item)
            else:
                dataset.cases.append(_case(item, folder, expectations, questions))
    except DocumentError as exc:
        raise EvalError(str(exc)) from None
    if not dataset.cases:
        raise EvalError(f"no usable documents in {folder} (.pdf, .md, .txt; see skipped files above)")
    return dataset


def _expectations(folder: Path) -> dict[str, Expectation]:
    path = folder / EXPECTED_FILE
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise EvalError(f"{path}: cannot read: {' '.join(str(exc).split())[:300]}") from None
    if not isinstance(data, dict):
        raise EvalError(f"{path}: must map file names to expectations, got {type(data).__name__}")
    found = {}
    for name, raw in data.items():
        try:
            found[str(name)] = Expectation.model_validate(raw or {})
        except ValidationError as exc:
            problem = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'entry'}: {e['msg']}" for e in exc.errors()
            )
            raise EvalError(f"{path}: entry {name!r}: {problem}") from None
    return found


def _case(section: Section, folder: Path, expectations: dict[str, Expectation], questions: int) -> EvalCase:
    try:
        relative = Path(section.source).resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        relative = Path(section.source).name
    wanted = expectations.get(relative, Expectation())
    return EvalCase(
        label=section.label,
        text=section.text,
        questions=wanted.questions or questions,
        expected=tuple(wanted.status),
    )


class SeededCaller:
    """A model caller that sends every request with one seed, so each eval run draws differently."""

    def __init__(self, caller: Caller, seed: int) -> None:
        self.caller = caller
        self.seed = seed

    def __call__(self, call: ModelCall) -> ModelReply:
        return self.caller(call.model_copy(update={"seed": self.seed}))


@dataclass
class EvalRun:
    """Every job outcome of an evaluation, grouped by policy, plus the jobs that crashed."""

    outcomes: dict[str, list[JobOutcome]]
    errors: list[str] = field(default_factory=list)

    def summaries(self) -> dict[str, PolicySummary]:
        """The per-policy statistics, in the order the policies were given."""
        return {name: summarise(name, jobs) for name, jobs in self.outcomes.items() if jobs}


def run_eval(
    cases: Sequence[EvalCase],
    policies: Sequence[Policy],
    caller: Caller,
    settings: Settings,
    *,
    runs: int = 1,
    concurrency: int = 4,
    simulated: bool = False,
    contract: str = CONTRACT,
) -> EvalRun:
    """Run each policy ``runs`` times over every case of ``contract``, ``concurrency`` jobs at a time."""
    jobs = [(policy, run, index) for policy in policies for run in range(runs) for index in range(len(cases))]
    outcomes: dict[str, list[JobOutcome]] = defaultdict(list)
    options = EngineOptions.from_settings(settings)
    # The contract parameters each case's jobs are judged by, completed from the settings as enqueue does.
    params = [resolve_params(contract, job_params(contract, case.questions), settings) for case in cases]
    callers = [SeededCaller(caller, settings.simulator.seed + run) for run in range(runs)]

    def one(job: tuple[Policy, int, int]) -> JobOutcome:
        policy, run, index = job
        case = cases[index]
        spec = JobSpec(
            job_id=f"eval-{policy.name}-r{run}-{index}",
            contract=contract,
            params=params[index],
            policy=policy.name,
            source=case.text,
            simulated=simulated,
            options=options,
            priority="bulk",  # a batch of comparisons: its calls never take an interactive budget share
        )
        result = run_inline(spec, policy, callers[run], settings)
        return JobOutcome(policy.name, case.label, run, result, case.expected)

    run_result = EvalRun(outcomes={p.name: [] for p in policies})
    pool = ThreadPoolExecutor(max_workers=max(1, concurrency))
    try:
        futures = [(job, pool.submit(one, job)) for job in jobs]
        for (policy, run, index), future in futures:
            try:
                outcomes[policy.name].append(future.result())
            except Exception as exc:  # a crashed job is reported, not allowed to sink the comparison
                run_result.errors.append(f"{policy.name} run {run} {cases[index].label}: {exc!r}"[:500])
    except BaseException:
        # Interrupted: jobs not started are dropped, and nobody waits for the model calls in flight.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    run_result.outcomes.update(outcomes)
    return run_result


def job_params(contract: str, questions: int | None) -> dict[str, Any]:
    """``{"questions": N}`` for a contract that takes a question count (the quiz), else nothing."""
    try:
        takes_questions = "questions" in contract_class(contract).resolve_params({}, None)
    except ContractError:  # unknown or broken: admission says so, in one line
        takes_questions = True
    return {"questions": questions} if takes_questions and questions is not None else {}


def settings_note(settings: Settings, **extra: Any) -> dict[str, Any]:
    """The non-secret settings an eval result depends on, recorded in eval.json and the docs."""
    simulator = settings.simulator.model_dump() if extra.get("simulated") else None
    if simulator is not None and extra.get("latency_scale") is not None:
        # The scale the simulator ran with (--latency-scale), not the one the settings would start it with.
        simulator["latency_scale"] = extra["latency_scale"]
    return {
        "quiz": settings.quiz.model_dump(),
        "simulator": simulator,
        "model_endpoint": "simulator" if extra.get("simulated") else "configured OpenAI-compatible API",
        "section_max_chars": settings.batch.section_max_chars,
        **extra,
    }
