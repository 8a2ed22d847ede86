"""The job flow of a worker that can use OpenAI's Batch API: ``Flow``, with its model calls routed by job.

``BatchFlow`` is ``suture.workers.flow.job_flow.Flow`` with one difference: a model call of a job
whose spec asks for the Batch API (``suture.tasks.batch_mode``) is answered from the job's batch
line (``suture.workers.flow.batch_rounds``) instead of online. A call whose line has no reply yet
is recorded as waiting and ends its step "awaiting_batch" (the step applies nothing; its round
sends it again with the reply), so the flow's steps, their idempotence and their poison cap are
the online ones. The watchdog's sweep also runs the rounds.

How: the step being run (job, attempt, pointer) and the spec read by its opening are this
thread's context (Celery runs one task per thread), and ``caller`` is wrapped to read them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from suture.tasks.calls import ModelCall, ModelReply
from suture.tasks.vocabulary import StepOutcome
from suture.workers.flow.batch_rounds import AWAITING, BatchRounds, goes_through_batch
from suture.workers.flow.executions import Execution
from suture.workers.flow.job_flow import Flow
from suture.workers.store.records import TaskOpening

log = logging.getLogger(__name__)


class AwaitingBatch(Exception):
    """A call's batch line has no reply yet: the step stops here and is sent again by its round."""

    def __init__(self, job_id: str, n: int, pointer: str | None) -> None:
        where = f" slice {pointer}" if pointer else ""
        super().__init__(f"job {job_id}: attempt {n}{where} waits for its batch")
        self.job_id, self.n, self.pointer = job_id, n, pointer


@dataclass
class _Step:
    job_id: str
    n: int
    pointer: str | None
    spec: dict[str, Any] | None = None


@dataclass
class BatchFlow(Flow):
    """A ``Flow`` whose jobs may go through the Batch API (``rounds``)."""

    rounds: BatchRounds | None = None

    def __post_init__(self) -> None:
        self._local = threading.local()
        self.caller = self._routed(self.caller)

    def _attempt(self, run: Execution, n: int) -> StepOutcome:
        with self._step(run.job_id, n, None):
            try:
                return super()._attempt(run, n)
            except AwaitingBatch:
                return AWAITING

    def _slice(self, run: Execution, n: int, pointer: str) -> StepOutcome:
        with self._step(run.job_id, n, pointer):
            try:
                return super()._slice(run, n, pointer)
            except AwaitingBatch:
                return AWAITING

    def _open(self, run: Execution, **kwargs: Any) -> TaskOpening:
        opening = super()._open(run, **kwargs)
        step = getattr(self._local, "step", None)
        if step is not None and step.job_id == run.job_id:
            step.spec = opening.record.spec
        return opening

    def watchdog(self, now_s: float | None = None) -> list[str]:
        """The flow's watchdog sweep, after the Batch API rounds' (claim waiting lines, send due rounds)."""
        now = time.time() if now_s is None else now_s
        if self.rounds is not None:
            try:
                self.rounds.sweep(now)
            except Exception:  # the rounds' trouble must not keep the deadlines unwatched
                log.exception("batch API sweep failed; the job watchdog sweeps on")
        return super().watchdog(now)

    @contextmanager
    def _step(self, job_id: str, n: int, pointer: str | None) -> Iterator[None]:
        self._local.step = _Step(job_id, n, pointer)
        try:
            yield
        finally:
            self._local.step = None

    def _routed(self, online: Callable[[ModelCall], ModelReply]) -> Callable[[ModelCall], ModelReply]:
        def call(model_call: ModelCall) -> ModelReply:
            step: _Step | None = getattr(self._local, "step", None)
            if self.rounds is None or step is None or step.spec is None:
                return online(model_call)
            if not goes_through_batch(step.spec, step.n, step.pointer):
                return online(model_call)
            reply = self.rounds.call(step.job_id, model_call, step.n, step.pointer)
            if reply is None:
                raise AwaitingBatch(step.job_id, step.n, step.pointer)
            return reply

        return call
