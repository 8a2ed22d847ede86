"""The flow's words, defined once: job, attempt and slice statuses, and what a flow step reports.

Every module that stores, returns or compares one of these imports it from here, so mypy checks
each use against one list. Reasoning efforts and the default Redis URL are settings values and
live in ``suture.config.settings``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, get_args

# How a job ended: "cancelled" is stopped on request (suture.workers.producer.cancel), never by the engine.
FinalStatus = Literal["delivered", "soft_delivered", "refused", "failed", "cancelled"]
# A job's status as stored and as ``JobHandle.status()`` returns it.
JobStatus = Literal["queued", "running", FinalStatus]
# What one attempt came to (``AttemptRecord.outcome``).
AttemptOutcome = Literal["valid", "improved", "no_better", "unparseable", "refused", "transport_error"]
# What became of one surgical slice (``SliceRecord.status``).
SliceStatus = Literal["applied", "rolled_back", "unparseable", "refused", "transport_error", "not_improving"]


class FlowOutcome(StrEnum):
    """What one step of the job flow did (each ``Flow`` method's and Celery task's return value).

    A str, so a task's result stays the plain word Flower shows and a test compares.
    """

    APPLIED = "applied"  # the step's work was applied
    STORED = "stored"  # the attempt's output was stored for the merge
    DUPLICATE = "duplicate"  # another delivery of this task did it first
    STALE = "stale"  # the step is no longer the job's next one
    FINISHED = "finished"  # the job had already ended
    REDIRECTED = "redirected"  # the planner sent another step in its place
    INCOMPLETE = "incomplete"  # the merge found slices still out
    POISONED = "poisoned"  # redelivered past the limit: counted a poison
    GONE = "gone"  # the job expired from the store
    ERROR = "error"  # an internal error (recorded, the job given up)
    ALREADY_ENDED = "already_ended"  # a delivery found the job delivered before it
    AWAITING_BATCH = "awaiting_batch"  # the step's calls wait in a Batch API round


FINAL_STATUSES: frozenset[str] = frozenset(get_args(FinalStatus))
# The statuses whose result carries an output (valid, or the best one after retries ran out).
DELIVERED_STATUSES: frozenset[str] = frozenset({"delivered", "soft_delivered"})
# What a flow step returns: a FlowOutcome, or for a step that delivered the job, its ending (its final
# status, or ``failed:<cause>``: ``suture.tasks.causes.ending``).
StepOutcome = FlowOutcome | str
