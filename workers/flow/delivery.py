"""The end of a job: its final result stored once, reported, kept for its batch, and called back once.

Delivery is idempotent like every step: the result is stored by a once-only script (the first
delivery wins; a later one reads the stored result back), and the callback is owed once per round.
A URL callback joins the callback outbox and goes out as ``suture.callback`` on its own queue
(``suture.workers.webhooks``): this step never waits on a receiver. A task callback (only a name
listed in ``webhook.allowed_tasks``) is published once per round (flag ``task-callback:<round>``,
leased so a sender that dies mid-send is replaced). A resumed job (``producer.resume``) is a new
round: its new result is stored and its callback fires once more.
A job that gives up (deadline passed, poison task, internal error) soft-delivers its best output
so far, or fails if it has none; its result names the cause (``suture.tasks.causes``). A deadline's
reason states the job's own deadline and the tasks it cut short. Each stored result is told to the
flow's observer once (metrics, Sentry), and a delivery returns how the job ended (``ending``) when
this call stored it, which the Celery task returns for Flower.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

from suture.config.settings import Settings
from suture.tasks import engine
from suture.tasks.causes import GiveUpCause, ending
from suture.tasks.job import Finish, JobState, UnreadableSpec
from suture.tasks.spec import JobSpec
from suture.tasks.trace import build_result
from suture.tasks.vocabulary import FlowOutcome, StepOutcome
from suture.workers.errors import JobNotFound
from suture.workers.flow.observer import SILENT, Observer
from suture.workers.flow.planner import Planner
from suture.workers.store.job_store import JobRecord, JobStore
from suture.workers.store.outbox import Pending
from suture.workers.webhooks.sender import owe
from suture.workers.webhooks.targets import is_url

log = logging.getLogger(__name__)

# What a delivery returns when the job had ended before it (a redelivered or duplicate task).
ALREADY_ENDED = FlowOutcome.ALREADY_ENDED


class CallbackSender(Protocol):
    """Publishes a job's callback: ``suture.callback`` for a URL, the named task for a task callback."""

    def callback(self, job_id: str, tag: str) -> None: ...

    def task_callback(self, name: str, job_id: str, status: str) -> None: ...


@dataclass
class Delivery:
    """Delivers jobs of one worker process: its settings, store, planner and callback sender."""

    settings: Settings
    store: JobStore
    planner: Planner
    sender: CallbackSender
    observer: Observer = SILENT

    def deliver(
        self, job_id: str, *, give_up: str | None = None, cause: GiveUpCause | None = None
    ) -> StepOutcome:
        """Store the final result once, report it, and fire the callback once (``suture.deliver``).

        ``cause`` gives the job up (``deadline``: the reason is written here, from the job's own deadline).
        """
        try:
            record = self.store.load(job_id)
        except JobNotFound:  # expired from Redis: nothing to deliver, stop watching it
            self.store.watchlist.forget(job_id)
            return FlowOutcome.GONE
        if cause == "deadline" and give_up is None and record.result is None:
            give_up = self._deadline_reason(record)
        if give_up is not None and cause is None:
            cause = "internal"  # a give-up sent without a cause (by an older worker)
        return self.deliver_record(record, give_up=give_up, cause=cause)

    def _deadline_reason(self, record: JobRecord) -> str:
        reason = f"deadline of {round(record.deadline_after_s, 2):g} s passed"
        running = self.store.running_tasks(record.job_id, record.version)
        if running:
            reason += (
                f" while {', '.join(running[:5])} {'was' if len(running) == 1 else 'were'} still running"
            )
        return reason

    def deliver_record(
        self,
        record: JobRecord,
        state: JobState | None = None,
        *,
        give_up: str | None = None,
        finish: Finish | None = None,
        cause: GiveUpCause | None = None,
    ) -> StepOutcome:
        """Deliver ``record``'s job; a task that holds the job's state and finish passes them in.

        Returns the job's ending if this call stored its result, else ``already_ended``.
        """
        job_id = record.job_id
        result = record.result
        finished_before = result is not None
        outcome: StepOutcome = ALREADY_ENDED
        if result is None:
            try:
                state = state or self._state(record, give_up)
            except UnreadableSpec as exc:  # never misread: the job fails, saying why
                return self._unreadable(record, exc)
            result = self.final_result(record, state, give_up, finish, cause)
            if self.store.deliver(job_id, result):
                self.observer.ended(record, state, result)
                self._remember_accepted(record, result)
                outcome = ending(result)
            else:
                result = self.store.result(job_id) or result
        self._callback(record, result)
        if finished_before:  # a job left due on the watchdog's list for its callback (``cancel``)
            self.store.watchlist.forget(job_id)
        return outcome

    def _state(self, record: JobRecord, give_up: str | None) -> JobState:
        """The job's state; when giving up a job whose stored state cannot be read, a fresh one (no
        attempts)."""
        try:
            return self.planner.state(record)
        except Exception:
            if give_up is None:
                raise
            log.warning("job %s: its stored state cannot be read; giving it up without it", record.job_id)
            return self.planner.state(dataclasses.replace(record, state=None))

    def save_and_deliver(self, record: JobRecord, n: int, state: JobState, finish: Finish) -> StepOutcome:
        """Apply attempt ``n`` and deliver the job in one atomic write, as most jobs end.

        Returns the job's ending, or ``duplicate`` if the attempt was applied, or the job ended, before.
        """
        result = self.final_result(record, state, None, finish)
        if not self.store.save_and_deliver(record.job_id, n - 1, state.model_dump(mode="json"), result):
            return FlowOutcome.DUPLICATE  # another delivery of this task applied it first and delivered
        if state.attempts:
            self.observer.attempt_done(record, state.attempts[-1], late=False)
        self.observer.ended(record, state, result)
        self._remember_accepted(record, result)
        self._callback(record, result)
        return ending(result)

    def final_result(
        self,
        record: JobRecord,
        state: JobState,
        give_up: str | None,
        finish: Finish | None,
        cause: GiveUpCause | None = None,
    ) -> dict[str, Any]:
        """The job's result: ``state`` finished by ``finish``, by giving up, or as the engine decides."""
        if state.status is None:
            action = self.planner.next(state, record) if finish is None and give_up is None else finish
            if not isinstance(action, Finish):
                reason = give_up or "the chain stopped without finishing"
                action = give_up_finish(state, reason, cause or "internal")
            state = engine.finish(state, action)
        result = engine.result(state)
        result["job_id"] = record.job_id
        result["simulated"] = bool(result.get("simulated")) or self.planner.simulated()
        result["round"] = record.round
        return result

    def _unreadable(self, record: JobRecord, exc: UnreadableSpec) -> StepOutcome:
        """Fail a job whose stored spec this worker cannot read (a newer ``spec_version``), once."""
        result = build_result(
            job_id=record.job_id,
            status="failed",
            reason=str(exc),
            output=None,
            failures=[],
            attempts=[],
            skipped=[],
            simulated=False,
            job_round=record.round,
        )
        self.store.deliver(record.job_id, result)
        return "failed"

    def _callback(self, record: JobRecord, result: dict[str, Any]) -> None:
        spec = _readable(record)
        callback = spec.callback if spec is not None else None
        if not callback:
            return
        if is_url(str(callback)):
            owe(
                self.store,
                Pending(record.job_id, str(record.round)),
                self.sender.callback,
                lease_s=self.settings.webhook.pickup_lease_s,
            )
        elif str(callback) in self.settings.webhook.allowed_tasks:
            self._fire_task_callback(record, str(callback), str(result["status"]))
        else:  # enqueue refuses these; a job stored before the rule came in is not called back
            log.warning(
                "job %s: callback task %r is not in webhook.allowed_tasks; not sent", record.job_id, callback
            )

    def _fire_task_callback(self, record: JobRecord, target: str, status: str) -> None:
        """Publish the callback task until one publish completes: the lease holder sends, then marks it done.

        A plain once-flag taken before sending loses the callback when the sender dies mid-send (or
        Redis drops and the step re-runs). The lease outlives any live task (hard time limit) but not
        the visibility timeout, so a killed sender's redelivered task sends again; an in-process
        re-run is the same owner and may resend at once.
        """
        flag = f"task-callback:{record.round}"
        owner = f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"
        if self.store.lease(record.job_id, flag, owner, self.settings.worker.time_limit_s):
            self.sender.task_callback(target, record.job_id, status)
            self.store.mark_done(record.job_id, flag)

    def _remember_accepted(self, record: JobRecord, result: dict[str, Any]) -> None:
        spec = _readable(record)
        batch = spec.batch if spec is not None else None
        if not batch:
            return
        try:
            self.planner.accepted_outputs.add(str(batch), result)
        except Exception:  # examples are an optimisation; the result is already stored
            log.exception("job %s: could not keep its output for batch examples", record.job_id)


def cancel(
    settings: Settings, store: JobStore, job_id: str, reason: str, observer: Observer = SILENT
) -> JobRecord | None:
    """Store a ``cancelled`` result for a job that has not finished; its record, or None if it had.

    The result is built from the state as read and stored only if no attempt applied meanwhile (a
    version check in the same script), else built again from the newer state: the cancelled result's
    trace holds every attempt that was applied. Raises JobNotFound.
    """
    planner = Planner(settings, store, lambda: False)
    while True:
        record = store.load(job_id)
        if record.finished:
            return None
        state = engine.finish(planner.state(record), Finish(status="cancelled", reason=reason))
        result = engine.result(state)
        result |= {"job_id": job_id, "simulated": bool(result.get("simulated")), "round": record.round}
        # A callback must fire though this caller may fail to publish its suture.deliver: the job
        # stays due on the watchdog's list until a delivery has fired it.
        spec = _readable(record)
        due_s = time.time() if spec is not None and spec.callback else None
        stored = store.deliver_at(job_id, record.version, result, due_s=due_s)
        if stored:
            observer.ended(record, state, result)
        if stored is not None:
            return record if stored else None


def review_url(public_url: str | None, job_id: str) -> str | None:
    """The job's review page under ``api.public_url`` (``{public_url}/review/jobs/{job_id}``), if set."""
    return f"{public_url.rstrip('/')}/review/jobs/{job_id}" if public_url else None


def _readable(record: JobRecord) -> JobSpec | None:
    """The record's spec, or None if this worker cannot read it (its result says so)."""
    try:
        return record.job_spec
    except UnreadableSpec:
        return None


def give_up_finish(state: JobState, reason: str, cause: GiveUpCause = "internal") -> Finish:
    """Finish early: soft-deliver the best parsed output so far, or fail if there is none."""
    if state.best is None:
        return Finish(status="failed", reason=reason, cause=cause)
    if not state.best.failures:
        return Finish(status="delivered", reason=reason)
    return Finish(status="soft_delivered", reason=reason, cause=cause)
