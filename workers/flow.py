"""Drives one job's engine through the job store: the logic behind each Celery task, without Celery.

Every step is idempotent: attempt ``n`` applies only as a compare-and-set from store version
``n - 1``; a slice reply is stored once per pointer and the last one in claims the merge; a
merge applies once (same CAS); the result is stored once and the callback fires once. A
redelivered task that finds its work already applied re-dispatches what comes next (the next
task is idempotent too), so a worker killed between "applied" and "published" strands nothing.
Tasks are sent through a ``Dispatcher`` so tests can drive the flow without a broker.

A job enqueued with a ``batch`` gets example tier 2 on its retries: the fully valid outputs of
earlier jobs of the batch (``workers.accepted``), read only when a retry is planned. A resumed job
(``producer.resume``) is a new round of the same job: its new result is stored and its callback
fires once more (once per round, flag ``callback:<round>``).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

from config.settings import Settings
from contracts.examples import AcceptedOutput
from tasks import engine
from tasks.calls import ModelCall, ModelReply
from tasks.job import Finish, JobSpec, JobState, RunFull, RunSurgical, contract_for
from tasks.policy import Policy, load_policy
from workers.accepted import AcceptedOutputs
from workers.store import JobNotFound, JobRecord, JobStore

log = logging.getLogger(__name__)

Caller = Callable[[ModelCall], ModelReply]


class Dispatcher(Protocol):
    """Sends the next task of a job (Celery in production, direct calls in unit tests)."""

    def attempt(self, job_id: str, n: int) -> None: ...

    def slices(self, job_id: str, n: int, pointers: list[str]) -> None: ...

    def merge(self, job_id: str, n: int) -> None: ...

    def deliver(self, job_id: str, *, give_up: str | None = None) -> None: ...

    def callback(self, target: str, job_id: str, status: str) -> None: ...


@dataclass
class Flow:
    """The job flow for one worker process: its settings, store, model caller and dispatcher."""

    settings: Settings
    store: JobStore
    caller: Caller
    dispatcher: Dispatcher
    # Asked each time: the model client learns it talks to a simulator from its first reply.
    simulated: Callable[[], bool] = lambda: False
    progress: Callable[[str, JobState], None] | None = None
    _policies: dict[str, Policy] = field(default_factory=dict, init=False, repr=False)

    # -- suture.attempt ---------------------------------------------------------------------
    def attempt(self, job_id: str, n: int) -> str:
        """Run full attempt ``n`` (or whatever the engine asks next) and apply it once."""
        opening = self.store.open_task(job_id, f"attempt:{n}")
        record = opening.record
        if record.finished:  # maybe delivered by this task before a crash: make sure the callback went
            return self._deliver(record)
        if record.version >= n:
            return self._redelivered(record, n)
        if self._poisoned(record, f"attempt:{n}", opening.deliveries):
            return "poisoned"
        state = self._state(record)
        action = self._next(state, record)
        if not isinstance(action, RunFull) or action.n != n:
            self._dispatch(record, state, action)
            return "redirected"
        reply = self.caller(action.call)
        new_state = engine.apply_full(state, action, reply)
        return self._save_and_advance(record, n, new_state)

    # -- suture.surgical_slice --------------------------------------------------------------
    def surgical_slice(self, job_id: str, n: int, pointer: str) -> str:
        """Regenerate one slice of surgical attempt ``n``; the last slice in schedules the merge."""
        opening = self.store.open_task(job_id, f"slice:{n}:{pointer}", n=n, pointer=pointer)
        record = opening.record
        if record.finished or record.version >= n:
            return "finished"
        action = self._surgical_action(record, n)
        if action is None or pointer not in action.calls:
            return "stale"
        reply: dict[str, Any] | None = None
        if not opening.slice_stored:
            if self._poisoned(record, f"slice:{n}:{pointer}", opening.deliveries):
                return "poisoned"
            reply = self.caller(action.calls[pointer]).model_dump(mode="json")
        outcome = self.store.put_slice(job_id, n, pointer, reply or {}, expected=len(action.calls))
        complete = outcome.count >= len(action.calls)
        # A redelivered slice whose reply was already in re-sends the merge: the worker that
        # claimed it may have died before publishing, and the merge itself applies only once.
        if outcome.merge_claimed or (complete and not outcome.stored):
            self.dispatcher.merge(job_id, n)
        return "stored" if outcome.stored else "duplicate"

    # -- suture.merge -----------------------------------------------------------------------
    def merge(self, job_id: str, n: int) -> str:
        """Splice the slices of surgical attempt ``n`` into the state once, then go on."""
        opening = self.store.open_task(job_id, f"merge:{n}", n=n, slices=True)
        record = opening.record
        if record.finished:  # maybe delivered by this task before a crash: make sure the callback went
            return self._deliver(record)
        if record.version >= n:
            return self._redelivered(record, n)
        if self._poisoned(record, f"merge:{n}", opening.deliveries):
            return "poisoned"
        action = self._surgical_action(record, n)
        stored = opening.slices
        if action is None or set(stored) != set(action.calls):
            return "incomplete"
        replies = {pointer: ModelReply.model_validate(stored[pointer]) for pointer in action.calls}
        new_state = engine.apply_surgical(self._state(record), action, replies)
        return self._save_and_advance(record, n, new_state)

    # -- suture.deliver ---------------------------------------------------------------------
    def deliver(self, job_id: str, *, give_up: str | None = None) -> str:
        """Store the final result once, report it, and fire the callback once."""
        try:
            record = self.store.load(job_id)
        except JobNotFound:  # expired from Redis: nothing to deliver, stop watching it
            self.store.forget_deadline(job_id)
            return "gone"
        return self._deliver(record, give_up=give_up)

    def _deliver(
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
        if result is None:
            state = state or self._state(record)
            result = self._final_result(record, state, give_up, finish)
            if self.store.deliver(job_id, result):
                self._report(state, result)
                self._remember_accepted(record, result)
            else:
                result = self.store.result(job_id) or result
        self._callback(record, result)
        return str(result["status"])

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
            self.dispatcher.callback(target, record.job_id, status)
            self.store.mark_done(record.job_id, flag)

    # -- suture.watchdog --------------------------------------------------------------------
    def watchdog(self, now_s: float | None = None) -> list[str]:
        """Finish every job past its deadline (soft-deliver the best output, or fail); nudge stalled ones.

        A job whose next message was lost (a broker that died between handing a message out and
        recording it as unacked) makes no progress until its deadline; re-dispatching its next step
        after ``stall_s`` without progress recovers it early, safely, because every task is idempotent.
        """
        now = time.time() if now_s is None else now_s
        overdue = self.store.overdue(now)
        for job_id in overdue:
            self.dispatcher.deliver(
                job_id, give_up=f"deadline of {self.settings.worker.job_deadline_s:g} s passed"
            )
        for job_id in self.store.stalled(now - self.settings.worker.stall_s):
            if job_id not in overdue:
                self._nudge(job_id, now)
        return overdue

    def _nudge(self, job_id: str, now_s: float) -> None:
        record = self.store.load(job_id)
        if record.finished:
            return
        state = self._state(record)
        action = self._next(state, record)
        log.warning(
            "job %s: no progress for %g s; re-dispatching its next step", job_id, self.settings.worker.stall_s
        )
        self.store.touch(job_id, now_s)
        self._dispatch(record, state, action)

    # -- internals ---------------------------------------------------------------------------
    def _save_and_advance(self, record: JobRecord, n: int, state: JobState) -> str:
        action = self._next(state, record)
        if isinstance(action, Finish):
            return self._save_and_deliver(record, n, state, action)
        if not self.store.save_state(record.job_id, n - 1, state.model_dump(mode="json")):
            return "duplicate"  # another delivery of this task applied it first and moves on
        self._report_progress(record.job_id, state)
        self._dispatch(record, state, action)
        return "applied"

    def _save_and_deliver(self, record: JobRecord, n: int, state: JobState, finish: Finish) -> str:
        """Apply attempt ``n`` and deliver the job in one atomic write, as most jobs end.

        No progress event: the task's own task-succeeded event reports the end.
        """
        result = self._final_result(record, state, None, finish)
        if not self.store.save_and_deliver(record.job_id, n - 1, state.model_dump(mode="json"), result):
            return "duplicate"  # another delivery of this task applied it first and delivered
        self._report(state, result)
        self._remember_accepted(record, result)
        self._callback(record, result)
        return "applied"

    def _redelivered(self, record: JobRecord, n: int) -> str:
        if record.version == n:  # applied, but the next task may never have been published
            state = self._state(record)
            self._dispatch(record, state, self._next(state, record))
        return "duplicate"

    def _dispatch(self, record: JobRecord, state: JobState, action: RunFull | RunSurgical | Finish) -> None:
        """Send what comes after ``state`` (``record`` is the job as read before it, undelivered)."""
        job_id = record.job_id
        if isinstance(action, RunFull):
            self.dispatcher.attempt(job_id, action.n)
        elif isinstance(action, RunSurgical):
            self.store.put_action(job_id, action.n, action.model_dump(mode="json"))
            self.dispatcher.slices(job_id, action.n, sorted(action.calls))
        else:
            # Deliver in this task rather than a separate suture.deliver: one task fewer per job;
            # suture.deliver remains for the watchdog and poison jobs (store.deliver is once-only).
            self._deliver(record, state, finish=action)

    def _surgical_action(self, record: JobRecord, n: int) -> RunSurgical | None:
        stored = record.action(n)
        if stored is not None:
            return RunSurgical.model_validate(stored)
        action = self._next(self._state(record), record)
        return action if isinstance(action, RunSurgical) and action.n == n else None

    def _poisoned(self, record: JobRecord, task_key: str, deliveries: int) -> bool:
        limit = self.settings.worker.max_redeliveries + 1
        if deliveries <= limit:
            return False
        reason = f"task {task_key} was delivered {deliveries} times (limit {limit}); giving up"
        log.error("job %s: %s", record.job_id, reason)
        self.dispatcher.deliver(record.job_id, give_up=reason)
        return True

    def _state(self, record: JobRecord) -> JobState:
        if record.state is not None:
            return JobState.model_validate(record.state)
        return engine.start(self._engine_spec(record))

    def _engine_spec(self, record: JobRecord) -> JobSpec:
        from tasks.job import EngineOptions

        spec = record.spec
        return JobSpec(
            job_id=record.job_id,
            contract=spec["contract"],
            params=dict(spec.get("params") or {}),
            source=spec["input"],
            simulated=self.simulated(),
            options=EngineOptions.from_settings(self.settings),
        )

    def _next(self, state: JobState, record: JobRecord) -> RunFull | RunSurgical | Finish:
        # secrets are redacted from every prompt the engine builds
        policy = self._policy(record)
        accepted = self._accepted(state, record, policy)
        return engine.next_action(state, policy, accepted=accepted, secrets=self.settings.secrets())

    @cached_property
    def accepted_outputs(self) -> AcceptedOutputs:
        """The batches' accepted outputs, in the job store's Redis."""
        limit = self.settings.worker.accepted_per_batch
        ttl_s = self.settings.worker.store_ttl_s
        return AcceptedOutputs(self.store.redis, limit=limit, ttl_s=ttl_s, prefix=self.store.prefix)

    def _accepted(self, state: JobState, record: JobRecord, policy: Policy) -> list[AcceptedOutput]:
        # Only retries attach examples from the batch: a first attempt costs no extra Redis read.
        batch = record.spec.get("batch")
        if not batch or not policy.examples or not state.attempts or state.status is not None:
            return []
        return self.accepted_outputs.recent(str(batch))

    def _remember_accepted(self, record: JobRecord, result: dict[str, Any]) -> None:
        batch = record.spec.get("batch")
        if not batch:
            return
        try:
            self.accepted_outputs.add(str(batch), result)
        except Exception:  # examples are an optimisation; the result is already stored
            log.exception("job %s: could not keep its output for batch examples", record.job_id)

    def _policy(self, record: JobRecord) -> Policy:
        name = record.spec.get("policy") or self.settings.default_policy
        if name not in self.settings.policies:  # a policy file: read each time, it may change
            return load_policy(name, self.settings)
        # A configured policy is fixed for this process's settings: build it once, not per step.
        policy = self._policies.get(name)
        if policy is None:
            policy = self._policies[name] = load_policy(name, self.settings)
        return policy

    def _final_result(
        self, record: JobRecord, state: JobState, give_up: str | None, finish: Finish | None
    ) -> dict[str, Any]:
        if state.status is None:
            action = self._next(state, record) if finish is None and give_up is None else finish
            if not isinstance(action, Finish):
                action = _give_up(state, give_up or "the chain stopped without finishing")
            state = engine.finish(state, action)
        result = engine.result(state)
        result["job_id"] = record.job_id
        result["simulated"] = bool(result.get("simulated")) or self.simulated()
        result["round"] = record.round
        return result

    def _report(self, state: JobState, result: dict[str, Any]) -> None:
        try:
            from workers.sentry import report_final

            report_final(result, contract_for(state.spec).title)
        except Exception:  # reporting is best-effort; the result is already stored
            log.exception("job %s: could not report to Sentry", state.spec.job_id)

    def _report_progress(self, job_id: str, state: JobState) -> None:
        if self.progress is not None:
            self.progress(job_id, state)


def _give_up(state: JobState, reason: str) -> Finish:
    """Finish early: soft-deliver the best parsed output so far, or fail if there is none."""
    if state.best is None:
        return Finish(status="failed", reason=reason)
    status = "delivered" if not state.best.failures else "soft_delivered"
    return Finish(status=status, reason=reason)
