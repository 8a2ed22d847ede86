"""The end of a job: its final result stored once, reported, kept for its batch, and called back once.

Delivery is idempotent like every step: the result is stored by a once-only script (the first
delivery wins; a later one reads the stored result back), and the callback fires once per round
(flag ``callback:<round>``, leased so a sender that dies mid-send is replaced). A resumed job
(``producer.resume``) is a new round: its new result is stored and its callback fires once more.
A job that gives up (deadline passed, poison task, internal error) soft-delivers its best output
so far, or fails if it has none.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

from config.settings import Settings
from tasks import engine
from tasks.job import Finish, JobState, contract_for
from workers.planner import Planner
from workers.store import JobNotFound, JobRecord, JobStore

log = logging.getLogger(__name__)


class CallbackSender(Protocol):
    """Sends a job's callback (a Celery task name or an http(s) webhook URL)."""

    def callback(self, target: str, job_id: str, status: str) -> None: ...


@dataclass
class Delivery:
    """Delivers jobs of one worker process: its settings, store, planner and callback sender."""

    settings: Settings
    store: JobStore
    planner: Planner
    sender: CallbackSender

    def deliver(self, job_id: str, *, give_up: str | None = None) -> str:
        """Store the final result once, report it, and fire the callback once (``suture.deliver``)."""
        try:
            record = self.store.load(job_id)
        except JobNotFound:  # expired from Redis: nothing to deliver, stop watching it
            self.store.watchlist.forget(job_id)
            return "gone"
        return self.deliver_record(record, give_up=give_up)

    def deliver_record(
        self,
        record: JobRecord,
        state: JobState | None = None,
        *,
        give_up: str | None = None,
        finish: Finish | None = None,
    ) -> str:
        """Deliver ``record``'s job; a task that holds the job's state and finish passes them in."""
        job_id = record.job_id
        result = record.result
        finished_before = result is not None
        if result is None:
            state = state or self.planner.state(record)
            result = self.final_result(record, state, give_up, finish)
            if self.store.deliver(job_id, result):
                self._report(state, result)
                self._remember_accepted(record, result)
            else:
                result = self.store.result(job_id) or result
        self._callback(record, result)
        if finished_before:  # a job left due on the watchdog's list for its callback (``cancel``)
            self.store.watchlist.forget(job_id)
        return str(result["status"])

    def save_and_deliver(self, record: JobRecord, n: int, state: JobState, finish: Finish) -> str:
        """Apply attempt ``n`` and deliver the job in one atomic write, as most jobs end.

        No progress event: the task's own task-succeeded event reports the end.
        """
        result = self.final_result(record, state, None, finish)
        if not self.store.save_and_deliver(record.job_id, n - 1, state.model_dump(mode="json"), result):
            return "duplicate"  # another delivery of this task applied it first and delivered
        self._report(state, result)
        self._remember_accepted(record, result)
        self._callback(record, result)
        return "applied"

    def final_result(
        self, record: JobRecord, state: JobState, give_up: str | None, finish: Finish | None
    ) -> dict[str, Any]:
        """The job's result: ``state`` finished by ``finish``, by giving up, or as the engine decides."""
        if state.status is None:
            action = self.planner.next(state, record) if finish is None and give_up is None else finish
            if not isinstance(action, Finish):
                action = give_up_finish(state, give_up or "the chain stopped without finishing")
            state = engine.finish(state, action)
        result = engine.result(state)
        result["job_id"] = record.job_id
        result["simulated"] = bool(result.get("simulated")) or self.planner.simulated()
        result["round"] = record.round
        return result

    def _callback(self, record: JobRecord, result: dict[str, Any]) -> None:
        callback = record.spec.get("callback")
        if callback:
            self._fire_callback(record, str(callback), str(result["status"]))

    def _fire_callback(self, record: JobRecord, target: str, status: str) -> None:
        """Fire the callback until one send completes: the lease holder sends, then marks it done.

        A plain once-flag taken before sending loses the callback when the sender dies mid-send (or
        Redis drops and the step re-runs). The lease outlives any live task (hard time limit) but not
        the visibility timeout, so a killed sender's redelivered task sends again; an in-process
        re-run is the same owner and may resend at once.
        """
        flag = f"callback:{record.round}"
        owner = f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"
        if self.store.lease(record.job_id, flag, owner, self.settings.worker.time_limit_s):
            self.sender.callback(target, record.job_id, status)
            self.store.mark_done(record.job_id, flag)

    def _remember_accepted(self, record: JobRecord, result: dict[str, Any]) -> None:
        batch = record.spec.get("batch")
        if not batch:
            return
        try:
            self.planner.accepted_outputs.add(str(batch), result)
        except Exception:  # examples are an optimisation; the result is already stored
            log.exception("job %s: could not keep its output for batch examples", record.job_id)

    @staticmethod
    def _report(state: JobState, result: dict[str, Any]) -> None:
        try:
            from workers.sentry import report_final

            report_final(result, contract_for(state.spec).title)
        except Exception:  # reporting is best-effort; the result is already stored
            log.exception("job %s: could not report to Sentry", state.spec.job_id)


def cancel(settings: Settings, store: JobStore, job_id: str, reason: str) -> JobRecord | None:
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
        due_s = time.time() if record.spec.get("callback") else None
        stored = store.deliver_at(job_id, record.version, result, due_s=due_s)
        if stored is not None:
            return record if stored else None


def give_up_finish(state: JobState, reason: str) -> Finish:
    """Finish early: soft-deliver the best parsed output so far, or fail if there is none."""
    if state.best is None:
        return Finish(status="failed", reason=reason)
    status = "delivered" if not state.best.failures else "soft_delivered"
    return Finish(status=status, reason=reason)
