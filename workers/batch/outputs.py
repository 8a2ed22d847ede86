"""A batch's output folder: quizzes.jsonl in document order, traces/, the manifest, both reports.

Jobs finish in any order; quizzes.jsonl is written in plan order (``seq``, see
``suture.workers.batch.plan``) all the same: a finished job's line waits in a small buffer until
every job before it in the plan has finished (failed ones included, which write no line), then
goes out at once. Traces are written as jobs finish. ``finish`` writes what is still buffered, in
order, whatever stopped the batch. Every file is opened through ``OutputFolder`` (no link in the
folder is followed) and named after a job id only once it passed ``check_job_id`` (a job id, and the
one that was asked for); JSONL lines come from ``suture.workers.jsonl``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from suture.workers.jsonl import write_line
from suture.workers.output_folder import OutputFolder
from suture.workers.reports.batch_html import render
from suture.workers.review.render import render_job
from suture.workers.review.view import ReviewView

MANIFEST = "jobs.jsonl"
QUIZZES = "quizzes.jsonl"
# The embedded stack's Redis data, kept between runs of a --batch-api batch (its rounds' batch ids).
STORE = "store"
# Every name a batch writes in --out (checked before anything starts: none may be a link).
OUTPUT_NAMES = (
    QUIZZES,
    MANIFEST,
    "traces",
    "quizzes",
    "report.json",
    "report.html",
    "ledger.jsonl",
    "partial",
    STORE,
)


class BatchOutputs:
    """The output folder of one run: streams opened at the start, reports written at the end."""

    def __init__(self, out_dir: Path, *, fresh_manifest: bool) -> None:
        self.out_dir = out_dir
        self.folder = OutputFolder(out_dir)
        self.quizzes = self.folder.open(QUIZZES, "w")
        self.manifest = self.folder.open(MANIFEST, "w" if fresh_manifest else "a")
        self.waiting: dict[int, dict[str, Any] | None] = {}
        self.next_seq = 0

    def note(self, record: dict[str, Any]) -> None:
        """Append one record (a job enqueued, an input issue) to the manifest."""
        write_line(self.manifest, record)
        self.manifest.flush()

    def write_page(self, view: ReviewView, *, asked: str) -> dict[str, Any]:
        """Write a quiz's static page (the review rendering, no server needed); its report line."""
        href = self.folder.job_file("quizzes", view.job_id, ".html", asked=asked)
        self.folder.write_text(href, render_job(view, back="../report.html"))
        failures = sum(len(q.failures) for q in view.questions) + len(view.quiz_failures)
        return {"href": href, "title": view.title, "failures": failures, "repaired": view.repaired}

    def write_job(
        self, seq: int, source: dict[str, Any], result: dict[str, Any], *, asked: str
    ) -> tuple[str, dict[str, Any] | None]:
        """Write the trace now and the quizzes.jsonl line in plan order; returns the trace path and the line.

        ``asked`` is the job id the result was fetched for: a result naming another job (or no job
        id at all) is refused (``OutputFolderError``) before any path is built from it.
        """
        trace = self.folder.job_file("traces", result.get("job_id"), ".json", asked=asked)
        self.folder.write_text(trace, json.dumps({"source": source, **result}, indent=1, ensure_ascii=False))
        line = None
        if result.get("status") in ("delivered", "soft_delivered"):
            line = {"source": source, "job_id": result["job_id"], "status": result["status"]}
            line |= {"quiz": result.get("output"), "failures": result.get("failures") or []}
        self.write_line(seq, line)
        return trace, line

    def write_line(self, seq: int, line: dict[str, Any] | None) -> None:
        """Write quizzes.jsonl line ``seq`` once every line before it is out (None: a section with no
        quiz)."""
        self.waiting[seq] = line
        self._release()

    def _release(self) -> None:
        while self.next_seq in self.waiting:
            line = self.waiting.pop(self.next_seq)
            self.next_seq += 1
            if line is not None:
                write_line(self.quizzes, line)
        self.quizzes.flush()

    def finish(self, summary: dict[str, Any] | None) -> None:
        """Write lines still waiting (in order), close the streams, write both reports (if any)."""
        for seq in sorted(self.waiting):
            line = self.waiting.pop(seq)
            if line is not None:
                write_line(self.quizzes, line)
        self.quizzes.close()
        self.manifest.close()
        if summary is None:
            return
        self.folder.write_text("report.json", json.dumps(summary, indent=1, ensure_ascii=False))
        self.folder.write_text("report.html", render(summary))
