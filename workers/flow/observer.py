"""What the job flow tells the outside while jobs run: progress, attempts, endings, and work redone.

The flow calls an ``Observer`` at each of these moments and never waits on what it does with them:
the Celery runtime's observer (``suture.workers.runtime.observer``) turns them into Flower progress
events, Prometheus metrics and Sentry alerts; tests and the inline tools use ``SILENT``. An observer
must not raise into the flow (a monitoring hiccup never fails a job), and gets ids, counts, names and
the job's records, which it must keep document and output text out of whatever it sends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from suture.tasks.job import JobState
from suture.tasks.trace import AttemptRecord
from suture.workers.store.records import JobRecord

# Why a job's work runs again: a worker died mid-task, or the watchdog re-sent a stalled job's step.
Redone = Literal["worker_lost", "stalled"]


@dataclass(frozen=True)
class Progress:
    """Where a running job stands: its policy step, attempt number, failures so far, and what runs now."""

    job_id: str
    step: int
    attempt: int
    failures: int
    doing: str

    @classmethod
    def of(cls, state: JobState, step: int, attempt: int, doing: str) -> Progress:
        """Progress of a job in ``state`` (failures: of its best output so far) about to do ``doing``."""
        failures = len(state.best.failures) if state.best else len(state.last_failures)
        return cls(state.spec.job_id, step, attempt, failures, doing)


class Observer(Protocol):
    """Told by the flow what happens to jobs; every method returns quickly and never raises."""

    def running(self, progress: Progress) -> None:
        """A model call of the job starts (a full attempt, or one slice of a surgical one)."""
        ...

    def attempt_done(self, record: JobRecord, attempt: AttemptRecord, *, late: bool) -> None:
        """An attempt was applied to the job (``late``: it finished after the job had ended)."""
        ...

    def ended(self, record: JobRecord, state: JobState, result: dict[str, Any]) -> None:
        """The job's result was stored, by this process, once."""
        ...

    def redone(self, record: JobRecord, kind: Redone, what: str) -> None:
        """Work of the job runs again (``worker_lost`` mid-task, or ``stalled``: a watchdog nudge); once
        per job and kind."""
        ...


class Silent:
    """An observer that ignores everything (tests, inline runs)."""

    def running(self, progress: Progress) -> None:
        pass

    def attempt_done(self, record: JobRecord, attempt: AttemptRecord, *, late: bool) -> None:
        pass

    def ended(self, record: JobRecord, state: JobState, result: dict[str, Any]) -> None:
        pass

    def redone(self, record: JobRecord, kind: Redone, what: str) -> None:
        pass


SILENT = Silent()
