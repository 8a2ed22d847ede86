"""The main job: quiz every section of a set of course documents through the producer API.

``run_batch`` streams sections from ``workers.documents``, keeps at most ``jobs_in_flight`` jobs
enqueued-but-unfinished, and as each job finishes appends to ``quizzes.jsonl``, writes
``traces/<job>.json`` and folds the result into the report, so memory stays bounded whatever the
batch size. Idempotency keys come from (section content hash, questions, policy): rerunning the
same command reuses finished jobs. ``jobs.jsonl`` in the output folder lists what was enqueued,
so ``--collect`` can gather a ``--no-wait`` batch later.

Errors::

    BatchError               a terminal failure of the whole batch (store unreachable, stalled jobs)
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from config.settings import Settings
from contracts.quiz_model import Quiz
from workers.documents import InputIssue, Section, iter_documents
from workers.producer import JobHandle, ProducerError, enqueue, get_job
from workers.progress import BatchProgress
from workers.report import BatchReport
from workers.report_html import render
from workers.store import FINAL_STATUSES

CONTRACT = "quiz"
MANIFEST = "jobs.jsonl"


class BatchError(Exception):
    """The batch as a whole cannot go on; str() is one line for the user."""


@dataclass(frozen=True)
class BatchOptions:
    """What the user asked for on the command line."""

    inputs: tuple[str, ...]
    out_dir: Path
    questions: int = 15
    policy: str | None = None
    jobs_in_flight: int = 16
    wait: bool = True
    simulated: bool = False


def idempotency_key(section: Section, questions: int, policy: str | None) -> str:
    """Same section text, question count and policy -> same job, wherever the file lives."""
    raw = f"batch|{CONTRACT}|{section.content_sha256}|{questions}|{policy or ''}"
    return "batch-" + hashlib.sha256(raw.encode()).hexdigest()[:32]


def batch_id(options: BatchOptions) -> str:
    """Groups the jobs of one output folder (example tier 2 reuses accepted outputs within it)."""
    raw = f"{options.out_dir.resolve()}|{options.questions}|{options.policy or ''}"
    return "batch-" + hashlib.sha256(raw.encode()).hexdigest()[:16]


class _Outputs:
    """The output folder: quizzes.jsonl, traces/, the manifest, and both reports at the end."""

    def __init__(self, out_dir: Path, *, fresh_manifest: bool) -> None:
        self.out_dir = out_dir
        (out_dir / "traces").mkdir(parents=True, exist_ok=True)
        self.quizzes = (out_dir / "quizzes.jsonl").open("w", encoding="utf-8")
        self.manifest = (out_dir / MANIFEST).open("w" if fresh_manifest else "a", encoding="utf-8")

    def note(self, record: dict[str, Any]) -> None:
        self.manifest.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.manifest.flush()

    def write_job(self, source: dict[str, Any], result: dict[str, Any]) -> str:
        """Write the trace and, for a valid delivered quiz, its quizzes.jsonl line; returns the trace path."""
        trace = f"traces/{result['job_id']}.json"
        (self.out_dir / trace).write_text(
            json.dumps({"source": source, **result}, indent=1, ensure_ascii=False)
        )
        if result.get("status") in ("delivered", "soft_delivered"):
            line = {"source": source, "job_id": result["job_id"], "status": result["status"]}
            line |= {"quiz": result.get("output"), "failures": result.get("failures") or []}
            self.quizzes.write(json.dumps(line, ensure_ascii=False) + "\n")
            self.quizzes.flush()
        return trace

    def finish(self, summary: dict[str, Any] | None) -> None:
        """Close the streams and write both reports (none for a batch that was only enqueued)."""
        self.quizzes.close()
        self.manifest.close()
        if summary is None:
            return
        (self.out_dir / "report.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False))
        (self.out_dir / "report.html").write_text(render(summary), encoding="utf-8")


def checked(result: dict[str, Any]) -> dict[str, Any]:
    """Never pass an output that is not a quiz as delivered: demote it to failed with the reason."""
    if result.get("status") not in ("delivered", "soft_delivered"):
        return result
    try:
        Quiz.model_validate(result.get("output"))
    except ValidationError as exc:
        reason = f"delivered output is not a valid quiz ({exc.error_count()} schema errors); not written"
        return result | {"status": "failed", "reason": reason, "output": None}
    return result


class BatchRun:
    """One invocation of ``suture batch``: enqueue (or re-read) jobs, gather their results, report."""

    def __init__(self, settings: Settings, options: BatchOptions, *, err: TextIO | None = None) -> None:
        self.settings, self.options = settings, options
        self.err = err or sys.stderr
        self.report = BatchReport(simulated=options.simulated, settings_note=self._note())
        self.pending: dict[str, dict[str, Any]] = {}
        self.enqueued = 0
        self.last_finish_s = time.monotonic()

    def _note(self) -> dict[str, Any]:
        o = self.options
        return {"questions": o.questions, "policy": o.policy or self.settings.default_policy}

    def run(self, *, collect: bool = False) -> dict[str, Any]:
        """Run the batch to the end (or only enqueue, with ``wait=False``); returns report.json."""
        outputs = _Outputs(self.options.out_dir, fresh_manifest=not collect)
        with BatchProgress(stream=sys.stdout) as progress:
            items = self._manifest_items() if collect else self._enqueue_all(outputs, progress)
            for kind, record in items:
                self._track(kind, record)
            progress.set_total(self.enqueued)
            if self.options.wait or collect:
                while self.pending:
                    self._gather(outputs, progress)
        summary = self.report.summary() | {"enqueued": self.enqueued}
        outputs.finish(summary if self.options.wait or collect else None)
        return summary

    def _track(self, kind: str, record: dict[str, Any]) -> None:
        if kind == "issue":
            self.report.add_issue(record)
        elif kind == "job":
            self.pending[record["job_id"]] = record["source"]
            self.enqueued += 1

    def _enqueue_all(
        self, outputs: _Outputs, progress: BatchProgress
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        o = self.options
        for item in iter_documents(o.inputs, self.settings.batch):
            if isinstance(item, InputIssue):
                print(f"suture: {item}", file=self.err)
                record = item.describe()
                outputs.note({"type": "issue", **record})
                yield "issue", record
                continue
            while o.wait and len(self.pending) >= o.jobs_in_flight:
                self._gather(outputs, progress)
            record = self._enqueue(item)
            outputs.note({"type": "job", **record})
            yield "job", record

    def _enqueue(self, section: Section) -> dict[str, Any]:
        o = self.options
        key = idempotency_key(section, o.questions, o.policy)
        meta = {"source": section.describe()}
        try:
            handle = enqueue(
                CONTRACT, section.text, questions=o.questions, policy=o.policy,
                idempotency_key=key, batch=batch_id(o), meta=meta, settings=self.settings,
            )  # fmt: skip
        except ProducerError as exc:
            raise BatchError(f"cannot enqueue {section.label}: {exc}") from exc
        return {"job_id": handle.id, "source": section.describe(), "key": key}

    def _manifest_items(self) -> Iterator[tuple[str, dict[str, Any]]]:
        path = self.options.out_dir / MANIFEST
        if not path.is_file():
            raise BatchError(f"nothing to collect: {path} not found (run `suture batch ... --no-wait` first)")
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                record = json.loads(line)
                yield record.pop("type"), record

    def _gather(self, outputs: _Outputs, progress: BatchProgress) -> None:
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

    def _finish(self, handle: JobHandle, outputs: _Outputs, progress: BatchProgress) -> None:
        source = self.pending.pop(handle.id)
        result = checked(handle.result(timeout_s=30))
        trace = outputs.write_job(source, result)
        self.report.add_result(source, result, trace)
        progress.record(result)
        if result.get("status") in ("failed", "refused"):
            label = f"{source.get('file')} §{source.get('section')}"
            print(f"suture: {label}: {result['status']}: {result.get('reason')}", file=self.err)
