"""The main job: quiz every section of a set of course documents through the producer API.

``BatchRun.run(plan)`` takes the batch's plan (``suture.workers.batch.plan``: every section, read
before the first job, so the section count is known up front), keeps at most ``jobs_in_flight``
jobs enqueued-but-unfinished, and as each job finishes writes ``traces/<job>.json``, its
``quizzes.jsonl`` line (in document order, ``suture.workers.batch.outputs``) and folds the result
into the report, so memory stays bounded whatever the batch size. Idempotency keys come from
(section content hash, the contract's complete parameters, policy); the same key is the section's
in the batch's ledger (``ledger.jsonl``, ``suture.workers.batch.books``), which decides on any stack
what a rerun keeps: finished sections cost nothing again, and a quiz a person edited or accepted is
validated and kept, never regenerated. Changed rules (say ``quiz.options_per_question``) make new jobs.
``jobs.jsonl`` in the output folder lists what was enqueued, so ``--collect`` can gather a
``--no-wait`` batch later. With ``budget_usd``, a section is started only while it fits the budget
(``suture.workers.batch.budget``). Each section's question count, the teaching knobs and the
questions of earlier sections to avoid come from ``suture.workers.batch.knobs``; a section too short
for a quiz is listed in the report with the reason, and so are questions that repeat another section's.

Errors::

    BatchError               a terminal failure of the whole batch (store unreachable, stalled jobs)
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from typing import Any, TextIO

from suture.config.settings import Settings
from suture.contracts.quiz_params import KNOBS
from suture.contracts.registry import resolve_params
from suture.tasks.job import JobState
from suture.tasks.policy_choice import policy_name
from suture.tasks.vocabulary import DELIVERED_STATUSES
from suture.workers.batch.books import Books
from suture.workers.batch.budget import BatchBudget
from suture.workers.batch.carry import Carried
from suture.workers.batch.evaluation import job_params
from suture.workers.batch.in_flight import InFlight
from suture.workers.batch.kept import Kept
from suture.workers.batch.knobs import QuizAsk
from suture.workers.batch.limit_counters import LimitCounters
from suture.workers.batch.outputs import MANIFEST, BatchOutputs
from suture.workers.batch.plan import BatchPlan, make_plan
from suture.workers.batch.records import (
    CONTRACT,
    BatchError,
    BatchOptions,
    batch_id,
    batch_policy,
    checked,
    idempotency_key,
    its_own,
    manifest_record,
)
from suture.workers.documents import InputIssue, Section
from suture.workers.errors import ProducerError, StoreError
from suture.workers.local import shutdown
from suture.workers.printable import shown
from suture.workers.producer import JobHandle, enqueue, get_job
from suture.workers.reports.batch_report import BatchReport
from suture.workers.reports.progress import BatchProgress
from suture.workers.review.jobs import record_view
from suture.workers.review.view import build_view
from suture.workers.store.job_store import FINAL_STATUSES, get_store


class BatchRun:
    """One invocation of ``suture batch``: enqueue (or re-read) jobs, gather their results, report."""

    def __init__(self, settings: Settings, options: BatchOptions, *, err: TextIO | None = None) -> None:
        self.settings, self.options = settings, options
        self.err = err or sys.stderr
        self.pending: dict[str, tuple[int, dict[str, Any]]] = {}  # job id -> (plan position, source)
        self.enqueued = 0
        self.position = 0  # the next section's place in the plan (kept sections take one too)
        self.books: Books | None = None
        self.carried = Carried(settings, options.jobs_in_flight)
        # Every job's contract params, completed as enqueue does; a quiz's count and avoids: per section.
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
        self.budget = BatchBudget(settings, options)
        self.limits = LimitCounters(settings)

    def _note(self) -> dict[str, Any]:
        o = self.options
        knobs = {k: v for k, v in self.params["rules"].items() if k in KNOBS} if self.quiz else {}
        policy = policy_name(o.policy, o.contract, self.settings)
        return {"contract": o.contract, "questions": o.questions or "auto", "policy": policy} | knobs

    def run(self, plan: BatchPlan | None = None, *, collect: bool = False) -> dict[str, Any]:
        """Run the batch to the end (or only enqueue, with ``wait=False``); returns report.json. Sections the
        ledger calls done are kept; on Ctrl-C the jobs in flight are recorded, the report written, and it
        re-raises."""
        if plan is None and not collect:
            plan = make_plan(
                self.options.inputs,
                self.settings.batch,
                on_issue=self._print_issue,
                follow_symlinks=self.options.follow_symlinks,
            )
        books = self.books = Books(self.options.out_dir, self.options.contract, self.section_params, self.key)
        outputs = BatchOutputs(self.options.out_dir, fresh_manifest=not collect)
        books.open()
        try:
            total = None if plan is None else self._to_run(plan) - books.done_count(plan)
            with BatchProgress(stream=sys.stdout, total=total) as progress:
                try:
                    self._run_all(plan, outputs, progress, collect=collect)
                except KeyboardInterrupt:
                    self.carried.stop()
                    self._collect_ended(outputs, progress)
                    flying = {j: s for j, (_, s) in self.pending.items()}
                    flying |= {j: s for j, (_, _, s) in self.carried.running.items()}
                    ended = books.interrupted(
                        flying, get_store(self.settings), save=self.options.carry, in_flight=self._in_flight()
                    )
                    self._collect_ended(outputs, progress, only=ended)
                    outputs.finish(self.summary())
                    raise
        finally:
            books.close()
            if plan is not None:
                plan.discard()
        summary = self.summary()
        outputs.finish(summary if self.options.wait or collect else None)
        return summary

    def _in_flight(self) -> InFlight:
        questions = self.options.questions or self.settings.batch.auto_questions.max_questions
        return InFlight(self.settings, batch_policy(self.settings, self.options), questions)

    def _run_all(
        self, plan: BatchPlan | None, outputs: BatchOutputs, progress: BatchProgress, *, collect: bool
    ) -> None:
        items = (
            self._manifest_items() if collect or plan is None else self._enqueue_all(plan, outputs, progress)
        )
        for kind, record in items:
            self._track(kind, record, outputs)
        progress.set_total(self.enqueued)
        if self.options.wait or collect:
            while self.pending or self.carried:
                self._gather(outputs, progress)

    def summary(self) -> dict[str, Any]:
        """report.json as it stands: this run's results, the kept sections, this run's and the batch's
        cost."""
        extra = self.books.extra() if self.books is not None else {}
        self.report.deferred = self.limits.since()
        batch_usd = {"cost_usd": extra["batch_cost_usd"]} if extra else {}  # the report is the batch's
        return self.report.summary() | {"enqueued": self.enqueued} | extra | batch_usd

    def _print_issue(self, issue: InputIssue) -> None:
        print(f"suture: {issue}", file=self.err)

    def _track(self, kind: str, record: dict[str, Any], outputs: BatchOutputs) -> None:
        if kind == "issue":
            self.report.add_issue(record)
        elif kind == "job" and record.get("kept"):  # --collect: kept by the enqueuing run, its line as is
            outputs.write_line(self.position, record.get("line"))
            self.position += 1
        elif kind == "job":
            self.pending[record["job_id"]] = (self.position, record["source"])
            self.position += 1
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
            kept = self.books.keep(section) if self.books is not None else None
            if kept is not None:
                self._keep(kept, section, outputs)
                continue
            # a job an earlier run saved half done goes on from there, whichever stack this run is on
            state = self.books.carried(section) if self.books is not None else None
            while o.wait and len(self.pending) + len(self.carried) >= o.jobs_in_flight:
                self._gather(outputs, progress)
            if self.skipped(section):
                self.report.add_short(section.describe(), self.ask.why_not(len(section.text)))
                continue
            if not self.budget.admits(section, self.ask.count(len(section.text)), self.report):
                self.budget.stop(self.report, section, sections)
                return
            if state is not None:  # half done by an interrupted run: finished here, from where it stopped
                self._carry(state, section, outputs)
                continue
            record = self._enqueue(section)
            outputs.note({"type": "job", **record})
            yield "job", record

    def _keep(self, kept: Kept, section: Section, outputs: BatchOutputs) -> None:
        """A done section: its line written back in plan order, its quiz in the report (no cost this run)."""
        outputs.write_line(self.position, kept.line)
        source = section.describe()
        outputs.note(
            {"type": "job", "job_id": kept.job_id, "source": source, "kept": True, "line": kept.line}
        )
        self.position += 1
        page = None
        if kept.line is not None:
            view = build_view(kept.result, section.text, source=source)
            page = outputs.write_page(view, asked=kept.job_id)
        self.report.add_result(source, kept.result, kept.trace, page, paid=False)

    def _carry(self, state: JobState, section: Section, outputs: BatchOutputs) -> None:
        job_id, source = state.spec.job_id, section.describe()
        if self.books is not None:
            self.books.started(job_id, section)
        self.carried.start(state, self.position, source)
        outputs.note({"type": "job", "job_id": job_id, "source": source, "carried": True})
        self.position, self.enqueued = self.position + 1, self.enqueued + 1

    def _to_run(self, plan: BatchPlan) -> int:
        return sum(1 for section in plan.iter_sections() if not self.skipped(section))

    def skipped(self, section: Section) -> bool:
        """A section that gets no job: too short for a quiz (``QuizAsk.why_not`` says why)."""
        return self.quiz and self.ask.count(len(section.text)) is None

    def section_params(self, section: Section) -> dict[str, Any]:
        """The section's contract parameters: a quiz's count follows its length (``QuizAsk``), with the
        questions of earlier sections to avoid (advisory: not part of its key)."""
        if not self.quiz:
            return self.params
        return self.ask.params(self.ask.count(len(section.text)) or 1)

    def key(self, section: Section) -> str:
        """The section's job idempotency key, also its ledger key."""
        o, params = self.options, self.section_params(section)
        return idempotency_key(section, params, o.policy, o.contract, o.policy_rules, o.batch_api)

    def _enqueue(self, section: Section) -> dict[str, Any]:
        o = self.options
        params = self.section_params(section)
        key = idempotency_key(section, params, o.policy, o.contract, o.policy_rules, o.batch_api)
        meta = {"source": section.describe()}
        try:
            handle = enqueue(
                o.contract,
                section.text,
                params=params,
                policy=o.policy,
                policy_rules=o.policy_rules,
                idempotency_key=key,
                batch=batch_id(o),
                meta=meta,
                priority=o.priority,
                settings=self.settings,
                batch_api=o.batch_api,
            )
        except ProducerError as exc:
            raise BatchError(f"cannot enqueue {section.label}: {exc}") from exc
        if self.books is not None:
            self.books.started(handle.id, section)
        self.budget.enqueued(section, handle.id)
        return {"job_id": handle.id, "source": section.describe(), "key": key}

    def _manifest_items(self) -> Iterator[tuple[str, dict[str, Any]]]:
        path = self.options.out_dir / MANIFEST
        if not path.is_file():
            raise BatchError(f"nothing to collect: {path} not found (run `suture batch ... --no-wait` first)")
        with path.open(encoding="utf-8", newline="\n") as lines:
            for number, line in enumerate(lines, 1):
                yield manifest_record(path, number, line)

    def _gather(self, outputs: BatchOutputs, progress: BatchProgress) -> None:
        """Collect every pending job that has finished; pause briefly if none has."""
        finished = 0
        for job_id, seq, source, result in self.carried.finished():
            self._done(job_id, seq, source, checked(result, self.options.contract), outputs, progress)
            finished += 1
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

    def _collect_ended(
        self, outputs: BatchOutputs, progress: BatchProgress, only: list[str] | None = None
    ) -> None:
        """At Ctrl-C, record as finished each pending job that has already ended in the store.

        Polling collects a job a moment after its workers end it; one that ended in that moment would
        otherwise be recorded as interrupted with no state to go on from (it has none left), and the
        rerun would pay for all of it again. ``only``: the jobs ``Books.interrupted`` then found ended
        (the workers go on while this runs).
        """
        for job_id in list(self.pending) if only is None else [j for j in only if j in self.pending]:
            try:
                handle = get_job(job_id, self.settings)
                if handle.status() in FINAL_STATUSES:
                    self._finish(handle, outputs, progress)
            except StoreError:  # a store already stopping: the job is recorded as in flight
                continue

    def _finish(self, handle: JobHandle, outputs: BatchOutputs, progress: BatchProgress) -> None:
        result = checked(its_own(handle.id, handle.result(timeout_s=30)), self.options.contract)
        with shutdown.current().held():  # Ctrl-C: its ledger line, report entry and files, or none
            seq, source = self.pending.pop(handle.id)
            self.budget.finished(handle.id)
            self._done(handle.id, seq, source, result, outputs, progress, stored=True)

    def _done(
        self,
        job_id: str,
        seq: int,
        source: dict[str, Any],
        result: dict[str, Any],
        outputs: BatchOutputs,
        progress: BatchProgress,
        *,
        stored: bool = False,
    ) -> None:
        trace, line = outputs.write_job(seq, source, result, asked=job_id)
        if self.books is not None:
            self.books.finished(job_id, source, result, line)
        page = None
        if result.get("status") in DELIVERED_STATUSES and self.quiz:
            self.report.add_repeats(self.ask.finished(source, result.get("output")))
        if result.get("status") in DELIVERED_STATUSES:
            view = (
                record_view(get_store(self.settings).load(job_id), result, source=source)
                if stored
                else build_view(result, None, source=source)
            )
            page = outputs.write_page(view, asked=job_id) if view is not None else None
        self.report.add_result(source, result, trace, page)
        progress.record(result)
        if result.get("status") in ("failed", "refused"):
            label = f"{shown(source.get('file'))} §{source.get('section')}"
            print(f"suture: {label}: {result['status']}: {result.get('reason')}", file=self.err)
