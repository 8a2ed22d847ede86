"""The main job: quiz every section of a set of course documents through the producer API.

``BatchRun.run(plan)`` takes the batch's plan (``suture.workers.batch.plan``: every section, read
before the first job, so the section count is known up front), keeps at most ``jobs_in_flight``
jobs enqueued-but-unfinished, and as each job finishes writes ``traces/<job>.json``, its
``quizzes.jsonl`` line (in document order, ``suture.workers.batch.outputs``) and folds the result
into the report, so memory stays bounded whatever the batch size. Idempotency keys come from
(section content hash, the contract's complete parameters, policy): rerunning the same command with
the same rules reuses finished jobs; changed rules (say ``quiz.options_per_question``) make new ones.
``jobs.jsonl`` in the output folder lists what was enqueued, so ``--collect`` can gather a
``--no-wait`` batch later. With ``budget_usd``, a section is started only while the cost spent so
far, plus the expected cost of the jobs in flight and of this one, stays within the budget; the
sections left are listed in the report as not started. Each section's question count, the teaching
knobs and the questions of earlier sections to avoid come from ``suture.workers.batch.knobs``; a
section too short for a quiz is listed in the report with the reason, and so are questions that
repeat another section's.

Errors::

    BatchError               a terminal failure of the whole batch (store unreachable, stalled jobs)
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from suture.config.settings import Settings
from suture.contracts.quiz_params import KNOBS
from suture.contracts.registry import contract_class, resolve_params
from suture.tasks.policy import Policy, load_policy, policy_from_mapping
from suture.tasks.policy_choice import policy_name
from suture.tasks.vocabulary import DELIVERED_STATUSES
from suture.workers.batch.estimate import Estimator
from suture.workers.batch.evaluation import job_params
from suture.workers.batch.knobs import QuizAsk, identity
from suture.workers.batch.outputs import MANIFEST, BatchOutputs
from suture.workers.batch.plan import BatchPlan, make_plan
from suture.workers.documents import InputIssue, Section
from suture.workers.output_folder import OutputFolderError, check_job_id
from suture.workers.producer import JobHandle, ProducerError, enqueue, get_job
from suture.workers.reports.batch_report import BatchReport
from suture.workers.reports.progress import BatchProgress
from suture.workers.review.jobs import record_view
from suture.workers.store.job_store import FINAL_STATUSES, get_store

CONTRACT = "quiz"
# Once this many jobs have finished, their mean cost replaces the estimate in the budget projection.
MEASURED_AFTER_JOBS = 3


class BatchError(Exception):
    """The batch as a whole cannot go on; str() is one line for the user."""


@dataclass(frozen=True)
class BatchOptions:
    """What the user asked for on the command line."""

    inputs: tuple[str, ...]
    out_dir: Path
    questions: int | None = None  # None: auto, from each section's length (batch.auto_questions)
    policy: str | None = None
    policy_rules: dict[str, Any] | None = None  # a user's policy file, read by the CLI; ``policy`` names it
    jobs_in_flight: int = 16
    wait: bool = True
    simulated: bool = False
    budget_usd: float | None = None
    contract: str = CONTRACT
    knobs: dict[str, Any] = field(default_factory=dict)  # question_kinds, language, difficulty, audience


def idempotency_key(
    section: Section,
    params: dict[str, Any],
    policy: str | None,
    contract: str = CONTRACT,
    policy_rules: dict[str, Any] | None = None,
) -> str:
    """Same contract, section text, parameters (rules included; the advisory ``avoid_questions`` aside)
    and policy (a file's content too) -> same job, wherever the file lives; an edited policy file makes
    new jobs."""
    rules = json.dumps(identity(params), sort_keys=True, separators=(",", ":"))
    raw = f"batch|{contract}|{section.content_sha256}|{rules}|{policy or ''}{_rules_tag(policy_rules)}"
    return "batch-" + hashlib.sha256(raw.encode()).hexdigest()[:32]


def _rules_tag(policy_rules: dict[str, Any] | None) -> str:
    if policy_rules is None:  # a configured policy: the key as before files travelled as data
        return ""
    return "|rules:" + hashlib.sha256(json.dumps(policy_rules, sort_keys=True).encode()).hexdigest()


def batch_policy(settings: Settings, options: BatchOptions) -> Policy:
    """The policy the batch's jobs run: the rules of the user's file, else the configured one."""
    if options.policy_rules is not None:
        return policy_from_mapping(options.policy or "file", options.policy_rules, settings)
    return load_policy(policy_name(options.policy, options.contract, settings), settings)


def batch_id(options: BatchOptions) -> str:
    """Groups the jobs of one output folder (example tier 2 reuses accepted outputs within it)."""
    raw = f"{options.out_dir.resolve()}|{options.questions}|{options.policy or ''}{_rules_tag(options.policy_rules)}"
    return "batch-" + hashlib.sha256(raw.encode()).hexdigest()[:16]


def checked(result: dict[str, Any], contract_name: str = CONTRACT) -> dict[str, Any]:
    """Never pass an output that breaks the contract's schema as delivered: demote it to failed with the reason."""
    if result.get("status") not in DELIVERED_STATUSES:
        return result
    contract = contract_class(contract_name)
    try:
        contract.output_model.model_validate(result.get("output"))
    except ValidationError as exc:
        reason = f"delivered output is not a valid {contract.title.lower()} ({exc.error_count()} schema errors); not written"
        return result | {"status": "failed", "reason": reason, "output": None}
    return result


class BatchRun:
    """One invocation of ``suture batch``: enqueue (or re-read) jobs, gather their results, report."""

    def __init__(self, settings: Settings, options: BatchOptions, *, err: TextIO | None = None) -> None:
        self.settings, self.options = settings, options
        self.err = err or sys.stderr
        self.pending: dict[str, tuple[int, dict[str, Any]]] = {}  # job id -> (plan position, source)
        self.expected_usd: dict[str, float] = {}  # job id -> expected cost, while in flight
        self.enqueued = 0
        # The contract parameters every job stores, as enqueue completes them from these settings; a
        # quiz's count and questions to avoid are each section's own (``QuizAsk``).
        self.quiz = options.contract == CONTRACT
        given = (
            {"questions": 1, **options.knobs}
            if self.quiz
            else job_params(options.contract, options.questions)
        )
        self.params = resolve_params(options.contract, given, settings)
        self.ask = QuizAsk(settings, options.questions, options.knobs)
        self.report = BatchReport(simulated=options.simulated, settings_note=self._note())
        self.last_finish_s = time.monotonic()
        self.estimator: Estimator | None = None
        if options.budget_usd is not None:
            questions = options.questions or settings.batch.auto_questions.max_questions
            self.estimator = Estimator(settings, batch_policy(settings, options), questions)

    def _note(self) -> dict[str, Any]:
        o = self.options
        knobs = {k: v for k, v in self.params["rules"].items() if k in KNOBS} if self.quiz else {}
        policy = policy_name(o.policy, o.contract, self.settings)
        return {"contract": o.contract, "questions": o.questions or "auto", "policy": policy} | knobs

    def run(self, plan: BatchPlan | None = None, *, collect: bool = False) -> dict[str, Any]:
        """Run the batch to the end (or only enqueue, with ``wait=False``); returns report.json.

        Without a ``plan`` (and not collecting), the inputs are read into one here.
        """
        if plan is None and not collect:
            plan = make_plan(self.options.inputs, self.settings.batch, on_issue=self._print_issue)
        outputs = BatchOutputs(self.options.out_dir, fresh_manifest=not collect)
        try:
            with BatchProgress(stream=sys.stdout, total=None if plan is None else plan.sections) as progress:
                items = (
                    self._manifest_items()
                    if collect or plan is None
                    else self._enqueue_all(plan, outputs, progress)
                )
                for kind, record in items:
                    self._track(kind, record)
                progress.set_total(self.enqueued)
                if self.options.wait or collect:
                    while self.pending:
                        self._gather(outputs, progress)
        finally:
            if plan is not None:
                plan.discard()
        summary = self.report.summary() | {"enqueued": self.enqueued}
        outputs.finish(summary if self.options.wait or collect else None)
        return summary

    def _print_issue(self, issue: InputIssue) -> None:
        print(f"suture: {issue}", file=self.err)

    def _track(self, kind: str, record: dict[str, Any]) -> None:
        if kind == "issue":
            self.report.add_issue(record)
        elif kind == "job":
            self.pending[record["job_id"]] = (self.enqueued, record["source"])
            self.enqueued += 1

    def _enqueue_all(
        self, plan: BatchPlan, outputs: BatchOutputs, progress: BatchProgress
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        o = self.options
        for issue in plan.issues:
            outputs.note({"type": "issue", **issue.describe()})
            yield "issue", issue.describe()
        sections = plan.iter_sections()
        for section in sections:
            while o.wait and len(self.pending) >= o.jobs_in_flight:
                self._gather(outputs, progress)
            if self.quiz and self.ask.count(len(section.text)) is None:
                self.report.add_short(section.describe(), self.ask.why_not(len(section.text)))
                continue
            if not self._within_budget(section):
                self._not_started(section, sections)
                return
            record = self._enqueue(section)
            outputs.note({"type": "job", **record})
            yield "job", record

    def _within_budget(self, section: Section) -> bool:
        """Whether the cost so far, the jobs in flight and this section's job fit in the budget."""
        if self.estimator is None or self.options.budget_usd is None:
            return True
        finished = sum(self.report.status_counts.values())
        guess = self.estimator.job(len(section.text), self.ask.count(len(section.text))).cost_usd or 0.0
        if finished >= MEASURED_AFTER_JOBS:
            guess = self.report.cost_usd / finished  # what this batch's jobs really cost
        projected = self.report.cost_usd + sum(self.expected_usd.values()) + guess
        if projected <= self.options.budget_usd:
            self.expected_usd[section.content_sha256] = guess  # re-keyed by job id once enqueued
            return True
        return False

    def _not_started(self, first: Section, rest: Iterator[Section]) -> None:
        self.report.add_not_started(first.describe())
        for section in rest:
            self.report.add_not_started(section.describe())
        self.report.budget = {"limit_usd": self.options.budget_usd}

    def _enqueue(self, section: Section) -> dict[str, Any]:
        o = self.options
        params = self.ask.params(self.ask.count(len(section.text)) or 1) if self.quiz else self.params
        key = idempotency_key(section, params, o.policy, o.contract, o.policy_rules)
        meta = {"source": section.describe()}
        try:
            handle = enqueue(
                o.contract, section.text, params=params, policy=o.policy, policy_rules=o.policy_rules,
                idempotency_key=key, batch=batch_id(o), meta=meta, settings=self.settings,
            )  # fmt: skip
        except ProducerError as exc:
            raise BatchError(f"cannot enqueue {section.label}: {exc}") from exc
        if section.content_sha256 in self.expected_usd:
            self.expected_usd[handle.id] = self.expected_usd.pop(section.content_sha256)
        return {"job_id": handle.id, "source": section.describe(), "key": key}

    def _manifest_items(self) -> Iterator[tuple[str, dict[str, Any]]]:
        path = self.options.out_dir / MANIFEST
        if not path.is_file():
            raise BatchError(f"nothing to collect: {path} not found (run `suture batch ... --no-wait` first)")
        with path.open(encoding="utf-8", newline="\n") as lines:
            for number, line in enumerate(lines, 1):
                yield _manifest_record(path, number, line)

    def _gather(self, outputs: BatchOutputs, progress: BatchProgress) -> None:
        """Collect every pending job that has finished; pause briefly if none has."""
        finished = 0
        for job_id in list(self.pending):
            handle = get_job(job_id, self.settings)
            if handle.status() in FINAL_STATUSES:
                self._finish(handle, outputs, progress)
                finished += 1
        if finished:
            self.last_finish_s = time.monotonic()
        elif time.monotonic() - self.last_finish_s > self.settings.batch.job_timeout_s:
            raise BatchError(
                f"no job finished in {self.settings.batch.job_timeout_s:g} s; "
                f"{len(self.pending)} still pending (are workers running?)"
            )
        else:
            time.sleep(self.settings.batch.poll_interval_s)

    def _finish(self, handle: JobHandle, outputs: BatchOutputs, progress: BatchProgress) -> None:
        seq, source = self.pending.pop(handle.id)
        self.expected_usd.pop(handle.id, None)
        result = checked(_its_own(handle.id, handle.result(timeout_s=30)), self.options.contract)
        trace = outputs.write_job(seq, source, result, asked=handle.id)
        page = None
        if result.get("status") in DELIVERED_STATUSES and self.quiz:
            self.report.add_repeats(self.ask.finished(source, result.get("output")))
        if result.get("status") in DELIVERED_STATUSES:
            view = record_view(get_store(self.settings).load(handle.id), result, source=source)
            page = outputs.write_page(view, asked=handle.id) if view is not None else None
        self.report.add_result(source, result, trace, page)
        progress.record(result)
        if result.get("status") in ("failed", "refused"):
            label = f"{source.get('file')} §{source.get('section')}"
            print(f"suture: {label}: {result['status']}: {result.get('reason')}", file=self.err)


def _its_own(job_id: str, result: dict[str, Any]) -> dict[str, Any]:
    """The stored result if it is the result of ``job_id``; else a failed result saying so.

    A result naming another job (or a path) means the store was written by someone else: nothing of
    it is written to --out, and no file is named after what it says.
    """
    if result.get("job_id") == job_id:
        return result
    reason = f"the stored result names another job ({str(result.get('job_id'))[:80]!r}); not written"
    return {"job_id": job_id, "status": "failed", "reason": reason, "output": None, "failures": []}


def _manifest_record(path: Path, number: int, line: str) -> tuple[str, dict[str, Any]]:
    """One line of jobs.jsonl as (kind, record); a line that is not one suture wrote is a BatchError."""
    try:
        record = json.loads(line)
        kind = record.pop("type")
        if kind == "job":
            check_job_id(record["job_id"])  # a path will be built from it
    except (ValueError, KeyError, TypeError, AttributeError, OutputFolderError) as exc:
        problem = (
            exc if isinstance(exc, OutputFolderError) else f"not a record suture wrote ({type(exc).__name__})"
        )
        raise BatchError(f"cannot collect: {path} line {number}: {problem}") from None
    return kind, record
