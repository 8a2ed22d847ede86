"""Executions of a job's tasks, counted so that only a poison message ends a job.

A task's message can run more than once: redelivered after its worker died, re-sent by the
watchdog's stall nudge, re-run in-process while Redis or the broker is away. Only the first kind
says something about the message: one whose execution kills its worker (SIGKILL, OOM, hard time
limit) again and again is a poison, and its job must end ``failed`` rather than take workers down
for good. So each execution carries a token (``suture.workers.runtime.tasks`` makes one per Celery execution
and keeps it across its in-process re-runs). Opening the task adds the token to the task's
unfinished executions (``JobStore.open_task``; the same token counts once), and an execution that
ends without applying its work, by an outcome or an exception, takes it off again
(``JobStore.close_task``). That close is best-effort: during a Redis outage it fails, and that one
execution stays counted. An execution that applied keeps its token, which costs the hot path no
round trip: every later opening of an applied task returns before the cap is checked. A killed
execution never closes, so the opening after ``max_redeliveries + 1`` deaths gives up.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from suture.tasks.vocabulary import FlowOutcome, StepOutcome
from suture.workers.errors import StoreError
from suture.workers.store.job_store import JobStore
from suture.workers.store.records import TaskOpening

log = logging.getLogger(__name__)

# Outcomes of an execution that did its work: its task is applied, so it never reaches the cap again.
# An execution that ended its job (returns the job's ending, e.g. "delivered") applied its work too.
APPLIED = frozenset({"applied", FlowOutcome.STORED, "delivered", "soft_delivered", "refused", "cancelled"})


def applied(outcome: str) -> bool:
    """True for the outcome of an execution that applied its work (``failed:<cause>`` included)."""
    return outcome in APPLIED or outcome.startswith("failed:")


@dataclass(frozen=True)
class Execution:
    """One run of one task of a job (``task_key`` e.g. ``attempt:2``), named by its token."""

    job_id: str
    task_key: str
    token: str

    @classmethod
    def start(cls, job_id: str, task_key: str, token: str | None = None) -> Execution:
        """The execution ``token`` names, or a new one."""
        return cls(job_id, task_key, token or uuid.uuid4().hex)


@dataclass
class Executions:
    """Counts a job's task executions in its store and says when a task has become a poison."""

    store: JobStore
    max_redeliveries: int

    def open(
        self, execution: Execution, *, n: int = 0, pointer: str | None = None, slices: bool = False
    ) -> TaskOpening:
        """Read the job and count this execution as unfinished, in one round trip (``JobStore.open_task``)."""
        return self.store.open_task(
            execution.job_id, execution.task_key, token=execution.token, n=n, pointer=pointer, slices=slices
        )

    def run(self, execution: Execution, step: Callable[[], StepOutcome]) -> StepOutcome:
        """Run ``step`` (one execution); unless it applied its work, it no longer counts as unfinished."""
        try:
            outcome = step()
        except Exception:
            self._close(execution)
            raise
        if not applied(outcome):
            self._close(execution)
        return outcome

    def poison(self, execution: Execution, unfinished: int) -> str | None:
        """Why the job must give up when ``unfinished`` executions exceed the cap, else None."""
        limit = self.max_redeliveries + 1
        if unfinished <= limit:
            return None
        return (
            f"task {execution.task_key} was started {unfinished} times without finishing (limit {limit}); "
            "giving up"
        )

    def _close(self, execution: Execution) -> None:
        try:
            self.store.close_task(execution.job_id, execution.task_key, execution.token)
        except StoreError as exc:  # Redis away: this execution stays counted (see the module docstring)
            log.info("job %s: %s stays counted as unfinished: %s", execution.job_id, execution.task_key, exc)
