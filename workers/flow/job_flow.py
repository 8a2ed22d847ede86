"""Drives one job's engine through the job store: the logic behind each Celery task, without Celery.

Every step is idempotent: attempt ``n`` (a model call, or a deterministic fix: no call) applies
only as a compare-and-set from store version ``n - 1``; a slice reply is stored once per pointer
and the last one in claims the merge; a merge applies once (same CAS); the result is stored once
and the callback fires once. A redelivered task that finds its work already applied re-dispatches
what comes next (the next task is idempotent too), so a worker killed between "applied" and
"published" strands nothing. Tasks are sent through a ``Dispatcher`` (tests drive it brokerless).

Beside this module: ``suture.workers.flow.planner`` (the job's state and next action, batch examples),
``suture.workers.flow.delivery`` (the end of a job: result once, report, callback once per round) and
``suture.workers.flow.executions`` (the poison cap: only executions that never finished count toward it).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

from suture.config.settings import Settings
from suture.tasks import engine
from suture.tasks.calls import ModelCall, ModelReply
from suture.tasks.causes import GiveUpCause
from suture.tasks.dispatch_order import PriorityClass
from suture.tasks.job import Finish, JobState, RunFix, RunFull, RunSurgical
from suture.tasks.vocabulary import FlowOutcome, StepOutcome
from suture.workers.errors import StoreError
from suture.workers.flow import late
from suture.workers.flow.delivery import ALREADY_ENDED, Delivery
from suture.workers.flow.executions import Execution, Executions
from suture.workers.flow.kept_replies import KeptReplies
from suture.workers.flow.observer import SILENT, Observer, Progress
from suture.workers.flow.planner import Action, Planner, describe
from suture.workers.store.job_store import JobRecord, JobStore
from suture.workers.store.records import TaskOpening
from suture.workers.webhooks.sender import republish_due

log = logging.getLogger(__name__)

Caller = Callable[[ModelCall], ModelReply]


class Dispatcher(Protocol):
    """Sends the next task of a job (Celery in production, direct calls in unit tests); a model call's
    ``priority`` (its job's class) picks its queue, and its job's ``tenant`` the lane within it."""

    def attempt(self, job_id: str, n: int, priority: PriorityClass, tenant: str | None) -> None: ...

    def slices(
        self, job_id: str, n: int, pointers: list[str], priority: PriorityClass, tenant: str | None
    ) -> None: ...

    def merge(self, job_id: str, n: int) -> None: ...

    def deliver(
        self, job_id: str, *, give_up: str | None = None, cause: GiveUpCause | None = None
    ) -> None: ...

    def callback(self, job_id: str, tag: str) -> None:
        """Publish ``suture.callback`` for the job's callback ``tag`` (its round, or a review)."""
        ...

    def task_callback(self, name: str, job_id: str, status: str) -> None: ...

    def waiting(self) -> int | None:
        """Messages ready in suture's queues, not yet taken by a worker (None: the broker cannot say)."""
        ...


@dataclass
class Flow:
    """The job flow for one worker process: its settings, store, model caller and dispatcher.

    ``attempt``, ``surgical_slice`` and ``merge`` take an optional execution ``token``: the Celery
    task makes one per execution and keeps it across in-process re-runs (None: a new execution).
    """

    settings: Settings
    store: JobStore
    caller: Caller
    dispatcher: Dispatcher
    # Asked each time: the model client learns it talks to a simulator from its first reply.
    simulated: Callable[[], bool] = lambda: False
    observer: Observer = SILENT
    # Replies paid for whose write failed, for the step's re-run (``suture.workers.flow.kept_replies``).
    kept: KeptReplies = field(default_factory=KeptReplies)

    @cached_property
    def planner(self) -> Planner:
        """The job's engine state and next action (``suture.workers.flow.planner``)."""
        return Planner(self.settings, self.store, self.simulated)

    @cached_property
    def delivery(self) -> Delivery:
        """The end of a job (``suture.workers.flow.delivery``)."""
        return Delivery(self.settings, self.store, self.planner, self.dispatcher, self.observer)

    @cached_property
    def executions(self) -> Executions:
        """Task executions counted for the poison cap (``suture.workers.flow.executions``)."""
        return Executions(self.store, self.settings.worker.max_redeliveries)

    # -- suture.attempt ---------------------------------------------------------------------
    def attempt(self, job_id: str, n: int, token: str | None = None) -> StepOutcome:
        """Run full attempt ``n`` (or whatever the engine asks next) and apply it once."""
        run = Execution.start(job_id, f"attempt:{n}", token)
        return self.executions.run(run, lambda: self._attempt(run, n))

    def _attempt(self, run: Execution, n: int) -> StepOutcome:
        opening = self._open(run)
        record = opening.record
        stop = self._done_already(run, opening, n)
        if stop is not None:
            return stop
        state = self.planner.state(record)
        action = self.planner.next(state, record)
        if isinstance(action, RunFix) and action.n == n:  # the contract's fixers: no model call
            return self._save_and_advance(record, n, engine.apply_fix(state, action))
        if not isinstance(action, RunFull) or action.n != n:
            ended = self._dispatch(record, state, action)
            return ended if ended not in (None, ALREADY_ENDED) else FlowOutcome.REDIRECTED
        self.observer.running(
            Progress.of(state, action.step_index, n, f"attempt {n}: full, {action.call.model}")
        )
        reply = self.kept.take(run.job_id, run.task_key, action.call) or self.caller(action.call)
        try:
            return self._save_and_advance(record, n, engine.apply_full(state, action, reply))
        except StoreError:  # not stored: the re-run uses this reply rather than pay for another
            self.kept.keep(run.job_id, run.task_key, action.call, reply)
            raise

    # -- suture.surgical_slice --------------------------------------------------------------
    def surgical_slice(self, job_id: str, n: int, pointer: str, token: str | None = None) -> StepOutcome:
        """Regenerate one slice of surgical attempt ``n``; the last slice in schedules the merge."""
        run = Execution.start(job_id, f"slice:{n}:{pointer}", token)
        return self.executions.run(run, lambda: self._slice(run, n, pointer))

    def _slice(self, run: Execution, n: int, pointer: str) -> StepOutcome:
        job_id = run.job_id
        opening = self._open(run, n=n, pointer=pointer)
        record = opening.record
        if record.finished or record.version >= n:
            return FlowOutcome.FINISHED
        action = self.planner.surgical_action(record, n)
        if action is None or pointer not in action.calls:
            return FlowOutcome.STALE
        reply: ModelReply | None = None
        call = action.calls[pointer]
        if not opening.slice_stored:
            if self._poisoned(run, opening.unfinished):
                return FlowOutcome.POISONED
            doing = f"attempt {n}: slice {pointer} of {len(action.calls)}, {action.model}"
            self.observer.running(Progress(job_id, action.step_index, n, len(action.calls), doing))
            reply = self.kept.take(job_id, run.task_key, call) or self.caller(call)
        stored = reply.model_dump(mode="json") if reply is not None else {}
        try:
            outcome = self.store.put_slice(job_id, n, pointer, stored, expected=len(action.calls))
        except StoreError:  # not stored: the re-run uses this reply rather than pay for another
            if reply is not None:
                self.kept.keep(job_id, run.task_key, call, reply)
            raise
        complete = outcome.count >= len(action.calls)
        # A redelivered slice whose reply was already in re-sends the merge: the worker that
        # claimed it may have died before publishing, and the merge itself applies only once.
        if outcome.merge_claimed or (complete and not outcome.stored):
            self.dispatcher.merge(job_id, n)
        return FlowOutcome.STORED if outcome.stored else FlowOutcome.DUPLICATE

    # -- suture.merge -----------------------------------------------------------------------
    def merge(self, job_id: str, n: int, token: str | None = None) -> StepOutcome:
        """Splice the slices of surgical attempt ``n`` into the state once, then go on."""
        run = Execution.start(job_id, f"merge:{n}", token)
        return self.executions.run(run, lambda: self._merge(run, n))

    def _merge(self, run: Execution, n: int) -> StepOutcome:
        opening = self._open(run, n=n, slices=True)
        record = opening.record
        if record.finished and record.version < n:
            late.count_late_merge(self.store, self.planner, self.observer, record, n, opening.slices)
        stop = self._done_already(run, opening, n)
        if stop is not None:
            return stop
        action = self.planner.surgical_action(record, n)
        stored = opening.slices
        if action is None or set(stored) != set(action.calls):
            return FlowOutcome.INCOMPLETE
        replies = {pointer: ModelReply.model_validate(stored[pointer]) for pointer in action.calls}
        new_state = engine.apply_surgical(self.planner.state(record), action, replies)
        return self._save_and_advance(record, n, new_state)

    # -- suture.deliver ---------------------------------------------------------------------
    def deliver(
        self, job_id: str, *, give_up: str | None = None, cause: GiveUpCause | None = None
    ) -> StepOutcome:
        """Store the final result once, report it, and fire the callback once; returns how the job ended."""
        return self.delivery.deliver(job_id, give_up=give_up, cause=cause)

    # -- suture.watchdog --------------------------------------------------------------------
    def watchdog(self, now_s: float | None = None) -> list[str]:
        """Finish every job past its deadline (soft-deliver the best output, or fail); nudge stalled ones;
        publish again the callbacks past due (retries, and those a lost message or worker left behind).

        A job whose next message was lost (a broker that died between handing a message out and
        recording it as unacked) makes no progress until its deadline; re-dispatching its next step
        after ``stall_s`` without progress recovers it early, safely, because every task is idempotent.
        Only while the queues are drained, though: behind a backlog, a job with no task opened for
        ``stall_s`` is most likely still queued, and re-sending every such job lengthens the backlog
        that delays them (a storm of duplicates, and of double model calls when both copies run).
        A lost message's job is nudged once the backlog is through, or ends at its deadline.

        ``stall_s`` exceeds the hard time limit, so it is long (600 s by default): it must never re-send a
        step whose task may still run. The backstop for a lost message is ``idle_stall_s`` (tens of
        seconds): a job none of whose tasks any live worker holds (running, prefetched or waiting for a
        countdown: ``Watchlist.in_hand``, from their heartbeats) and none opened for that long, while the
        queues are drained, has nothing in flight at all.
        """
        now = time.time() if now_s is None else now_s
        republish_due(self.store, self.dispatcher.callback, now, lease_s=self.settings.webhook.pickup_lease_s)
        overdue = self.store.watchlist.overdue(now)
        for job_id in overdue:  # the delivery writes the reason, from the job's own deadline
            self.dispatcher.deliver(job_id, cause="deadline")
        stalled = self._stalled(now, set(overdue))
        if stalled:
            waiting = self.dispatcher.waiting()
            if waiting is None or waiting > 0:
                log.info(
                    "%d job(s) without progress, but %s message(s) wait: not nudging", len(stalled), waiting
                )
                return overdue
        for job_id, quiet_s in stalled.items():
            self._nudge(job_id, now, quiet_s)
        return overdue

    def _stalled(self, now_s: float, overdue: set[str]) -> dict[str, float]:
        """Jobs to nudge, each with how long it has been without progress: past ``stall_s``, or past
        ``idle_stall_s`` with nothing in any live worker's hands."""
        worker = self.settings.worker
        stalled = {j: worker.stall_s for j in self.store.watchlist.stalled(now_s - worker.stall_s)}
        idle_s = worker.idle_stall_s
        if idle_s < worker.stall_s:
            idle = [j for j in self.store.watchlist.idle(now_s - idle_s) if j not in stalled]
            held = self.store.watchlist.in_hand(now_s, idle_s) if idle else set()
            stalled |= {j: idle_s for j in idle if j not in held}
        return {j: quiet_s for j, quiet_s in stalled.items() if j not in overdue}

    def _nudge(self, job_id: str, now_s: float, quiet_s: float) -> None:
        record = self.store.load(job_id)
        if record.finished:
            return
        state = self.planner.state(record)
        action = self.planner.next(state, record)
        count = self.store.watchlist.nudged(job_id, now_s, quiet_s)
        what = f"no progress for {quiet_s:g} s; re-sent its next step ({describe(action)})"
        log.warning("job %s: %s (nudge %d)", job_id, what, count)
        if self.store.notes.claim_once(job_id, "alerted:nudged"):
            self.observer.redone(record, "stalled", f"the watchdog found {what}")
        self._dispatch(record, state, action)

    # -- internals ---------------------------------------------------------------------------
    def _save_and_advance(self, record: JobRecord, n: int, state: JobState) -> StepOutcome:
        action = self.planner.next(state, record)
        if isinstance(action, Finish):
            outcome = self.delivery.save_and_deliver(record, n, state, action)
            if outcome == "duplicate":
                late.count_if_late(self.store, self.observer, record.job_id, n, state)
            return outcome
        # A surgical round's action is stored in the same atomic write: one round trip for the step.
        surgical = (action.n, action.model_dump(mode="json")) if isinstance(action, RunSurgical) else None
        if not self.store.save_state(record.job_id, n - 1, state.model_dump(mode="json"), action=surgical):
            late.count_if_late(self.store, self.observer, record.job_id, n, state)
            # Another delivery of this task applied step n first, perhaps this very attempt whose reply
            # was lost before the next step went out: re-send the step the job saved, else the job waits
            # for the watchdog's stall_s. Re-sending is safe: every task is idempotent on the job version.
            current = self.store.load(record.job_id)
            if not current.finished:
                return self._redelivered(current, n)
            return FlowOutcome.DUPLICATE
        self.observer.attempt_done(record, state.attempts[-1], late=False)
        self._dispatch(record, state, action, action_stored=True)
        return FlowOutcome.APPLIED

    def _done_already(self, run: Execution, opening: TaskOpening, n: int) -> StepOutcome | None:
        """The outcome of a step ``n`` that must not run: the job finished, ``n`` applied, or a poison."""
        record = opening.record
        if record.finished:  # maybe delivered by this task before a crash: make sure the callback went
            return self.delivery.deliver_record(record)
        if record.version >= n:
            return self._redelivered(record, n)
        if self._poisoned(run, opening.unfinished):
            return FlowOutcome.POISONED
        return None

    def _redelivered(self, record: JobRecord, n: int) -> StepOutcome:
        if record.version == n:  # applied, but the next task may never have been published
            state = self.planner.state(record)
            self._dispatch(record, state, self.planner.next(state, record))
        return FlowOutcome.DUPLICATE

    def _dispatch(
        self, record: JobRecord, state: JobState, action: Action, *, action_stored: bool = False
    ) -> StepOutcome | None:
        """Send what comes after ``state`` (``record`` is the job as read before it, undelivered).

        A surgical action is stored before its slices go out, unless the caller stored it already.
        A finish is delivered here; returns the delivery's outcome then (None when a task was sent).
        """
        job_id = record.job_id
        if isinstance(action, RunFull | RunFix):  # a fix runs as an attempt task that calls no model
            self.dispatcher.attempt(job_id, action.n, record.job_spec.priority, record.tenant or "")
        elif isinstance(action, RunSurgical):
            if not action_stored:
                self.store.put_action(job_id, action.n, action.model_dump(mode="json"))
            self.dispatcher.slices(
                job_id, action.n, sorted(action.calls), record.job_spec.priority, record.tenant or ""
            )
        else:
            # Deliver in this task rather than a separate suture.deliver: one task fewer per job;
            # suture.deliver remains for the watchdog and poison jobs (store.deliver is once-only).
            return self.delivery.deliver_record(record, state, finish=action)
        return None

    def _poisoned(self, run: Execution, unfinished: int) -> bool:
        reason = self.executions.poison(run, unfinished)
        if reason is None:
            return False
        log.error("job %s: %s", run.job_id, reason)
        self.dispatcher.deliver(run.job_id, give_up=reason, cause="worker_lost")
        return True

    def _open(
        self, run: Execution, *, n: int = 0, pointer: str | None = None, slices: bool = False
    ) -> TaskOpening:
        """Open the task's execution; an earlier execution that never finished means its worker was lost."""
        opening = self.executions.open(run, n=n, pointer=pointer, slices=slices)
        lost = opening.unfinished - 1
        if lost > 0 and self.store.notes.claim_once(run.job_id, "alerted:lost"):
            what = f"{run.task_key} ran again: {lost} earlier execution(s) never finished (a worker was lost)"
            self.observer.redone(opening.record, "worker_lost", what)
        return opening
