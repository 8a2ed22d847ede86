"""A batch run's bookkeeping in ``--out``: which sections are already done, and the ledger events of this run.

``BatchRun`` asks ``Books`` whether a section is done (``keep``: the ledger says so, see
``suture.workers.batch.kept``), and tells it when a job finished (``finished``) or was stopped by
Ctrl-C (``interrupted``: its cost so far, read from the store before the stack stops, with its
calls in flight at their estimated cost, ``in_flight``). ``extra`` is what report.json adds: the
sections kept, the quizzes a person edited or accepted (with their failures under the contract),
this run's cost and the batch's total over every run, and the part of each that is estimated.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from suture.tasks.job import JobState
from suture.tasks.vocabulary import FINAL_STATUSES
from suture.workers.batch.carry import load_partial, save_partial
from suture.workers.batch.in_flight import InFlight, InFlightCost
from suture.workers.batch.kept import Kept, KeptError, Previous
from suture.workers.batch.ledger import LedgerWriter, quiz_sha256
from suture.workers.batch.plan import BatchPlan
from suture.workers.batch.records import BatchError
from suture.workers.documents import Section

MAX_TOUCHED_LISTED = 200


class Books:
    """The ledger of one output folder as one run reads and extends it."""

    def __init__(
        self,
        out_dir: Path,
        contract: str,
        params_of: Callable[[Section], dict[str, Any]],
        key_of: Callable[[Section], str],
    ) -> None:
        self.contract, self.params_of, self.key_of = contract, params_of, key_of
        try:
            self.previous = Previous.load(out_dir)
        except KeptError as exc:
            raise BatchError(str(exc)) from None
        self.out_dir = out_dir
        self.writer: LedgerWriter | None = None
        self.kept = 0
        self.touched: list[dict[str, Any]] = []
        self.run_usd = 0.0  # what this run's events cost (jobs finished and interrupted)
        self.estimated_usd = 0.0  # the part of it estimated: calls in flight at Ctrl-C (``in_flight``)
        self.calls_in_flight = 0
        self.settled_usd = 0.0  # earlier runs' estimates replaced by a real cost in this run
        self.keys: dict[str, tuple[str, str]] = {}  # job id -> (key, section sha256), while in flight

    def open(self) -> None:
        """Open the ledger for appending (after the output folder was checked)."""
        self.writer = LedgerWriter(self.out_dir)

    def close(self) -> None:
        """Close the ledger."""
        if self.writer is not None:
            self.writer.close()

    def key(self, section: Section) -> str:
        """The section's key (also its job's idempotency key)."""
        return self.key_of(section)

    def done_count(self, plan: BatchPlan) -> int:
        """How many of the plan's sections the ledger already calls done."""
        ledger = self.previous.ledger
        return sum(1 for s in plan.iter_sections() if ledger.done(self.key(s), s.content_sha256))

    def keep(self, section: Section) -> Kept | None:
        """The kept form of a done section (its ledger event written), else None: it runs."""
        kept = self.previous.keep(self.contract, section, self.key(section), self.params_of(section))
        if kept is None:
            return None
        self.kept += 1
        if kept.event is not None:
            self._write(*kept.event)
        if kept.touched is not None and len(self.touched) < MAX_TOUCHED_LISTED:
            failures = kept.line.get("failures") if kept.line else []
            codes = sorted({str(f.get("code")) for f in failures or []})
            entry = {"source": section.describe(), "job_id": kept.job_id, "how": kept.touched}
            self.touched.append(entry | {"status": kept.result.get("status"), "codes": codes})
        return kept

    def started(self, job_id: str, section: Section) -> None:
        """Remember which section a job runs, for its ledger event."""
        self.keys[job_id] = (self.key(section), section.content_sha256)

    def finished(self, job_id: str, source: dict[str, Any], result: dict[str, Any], line: Any) -> None:
        """Record a finished job: status, cost (less what an earlier run recorded of it) and output digest."""
        key, sha = self.keys.pop(job_id, (None, None))
        if key is None:
            return
        paid, settled = self._paid_before(key, job_id)
        cost = float(result.get("cost_usd") or 0.0) - paid
        quiz = line.get("quiz") if isinstance(line, dict) else None
        entry = {"key": key, "section_sha256": sha, "job_id": job_id, "status": result.get("status")}
        entry |= {"cost_usd": round(cost, 8), "source": source} | self._settle(settled)
        entry["output_sha256"] = quiz_sha256(quiz) if quiz is not None else None
        self._write("finished", entry)

    def interrupted(
        self, sources: dict[str, dict[str, Any]], store: Any, *, save: bool, in_flight: InFlight | None = None
    ) -> list[str]:
        """Record every job still in flight, with its cost so far as the store knows it and its calls in
        flight at their estimated cost (``in_flight``); ``save``: its engine state too (an embedded
        stack, whose store goes with it), for the rerun to carry on.

        Returns the jobs found ended meanwhile (the workers go on during Ctrl-C), unrecorded: the caller
        records them as finished, else a rerun would pay for them again."""
        ended: list[str] = []
        for job_id, source in sources.items():
            if job_id not in self.keys:
                continue
            cost, partial, flying = 0.0, None, InFlightCost()
            with contextlib.suppress(Exception):  # a store already stopping: the cost is then unknown
                record = store.load(job_id)
                state = JobState.model_validate(record.state) if record.state else None
                if record.status in FINAL_STATUSES:  # its result is stored
                    ended.append(job_id)
                    continue
                if state is not None:
                    cost = state.spent_usd
                    if save and state.attempts and state.status is None:
                        partial = save_partial(self.out_dir, job_id, record.state)
                if in_flight is not None and (state is None or state.status is None):
                    flying = in_flight.cost(store, record, state)
            if job_id in ended:
                continue
            key, sha = self.keys.pop(job_id)
            if partial is None:  # a job carried from an earlier run keeps its saved state
                partial = self._partial_before(key, job_id)
            paid, settled = self._paid_before(key, job_id)
            cost += flying.usd - paid
            entry: dict[str, Any] = {
                "key": key,
                "section_sha256": sha,
                "job_id": job_id,
                "status": "interrupted",
            }
            entry |= {"cost_usd": round(max(cost, 0.0), 8), "source": source, "partial": partial}
            if flying.calls:
                entry |= {"estimated_usd": flying.usd, "calls_in_flight": flying.calls}
                self.estimated_usd += flying.usd
                self.calls_in_flight += flying.calls
            self._write("interrupted", entry | self._settle(settled))
        return ended

    def carried(self, section: Section) -> JobState | None:
        """The saved state of this section's job interrupted by an earlier run, if it can go on."""
        entry = self.previous.ledger.by_key.get(self.key(section))
        if entry is None or entry.status != "interrupted":
            return None
        return load_partial(self.out_dir, entry.partial, entry.job_id, section.text)

    def _partial_before(self, key: str, job_id: str) -> str | None:
        entry = self.previous.ledger.by_key.get(key)
        return entry.partial if entry is not None and entry.job_id == job_id else None

    def _paid_before(self, key: str, job_id: str) -> tuple[float, float]:
        """What earlier runs recorded of this very job (interrupted, then finished here), and the estimate
        this run's real cost settles. A job carried from ``partial/`` lost its calls in flight, so their
        estimate stays in the batch's cost; a job that went on in its store finished them, so its real
        cost replaces the estimate."""
        entry = self.previous.ledger.by_key.get(key)
        if entry is None or entry.job_id != job_id:
            return 0.0, 0.0
        if entry.partial is not None:
            return entry.cost_usd - entry.estimated_usd, 0.0
        return entry.cost_usd, entry.estimated_usd

    def _settle(self, settled: float) -> dict[str, Any]:
        if settled <= 0:
            return {}
        self.settled_usd += settled
        return {"estimate_settled": True}

    def _write(self, event: str, entry: dict[str, Any]) -> None:
        self.run_usd += float(entry.get("cost_usd") or 0.0)
        if self.writer is not None:
            self.writer.write(event, entry)

    def extra(self) -> dict[str, Any]:
        """What report.json adds: kept sections, touched quizzes, this run's and the batch's cost."""
        return {
            "kept": self.kept,
            "touched": self.touched,
            "run_cost_usd": round(self.run_usd, 6),
            "batch_cost_usd": round(self.previous.ledger.total_usd + self.run_usd, 6),
            # the estimated parts of both: calls in flight at Ctrl-C, whose real cost never came back
            "estimated_usd": round(self.estimated_usd, 6),
            "calls_in_flight": self.calls_in_flight,
            "batch_estimated_usd": round(
                max(0.0, self.previous.ledger.estimated_usd - self.settled_usd + self.estimated_usd), 6
            ),
        }


def all_done(
    out_dir: Path,
    plan: BatchPlan,
    contract: str,
    params_of: Callable[[Section], dict[str, Any]],
    key_of: Callable[[Section], str],
    skipped: Callable[[Section], bool],
) -> bool:
    """Whether the ledger in ``out_dir`` calls every section of ``plan`` done, or it gets no job at all
    (``skipped``: too short for a quiz): then no stack is needed."""
    books = Books(out_dir, contract, params_of, key_of)
    ledger = books.previous.ledger
    return all(skipped(s) or ledger.done(books.key(s), s.content_sha256) for s in plan.iter_sections())
