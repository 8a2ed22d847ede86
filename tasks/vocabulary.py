"""The flow's words, defined once: job, attempt and slice statuses, and what a flow step reports.

Every module that stores, returns or compares one of these imports it from here, so mypy checks
each use against one list. Reasoning efforts and the default Redis URL are settings values and
live in ``suture.config.settings``.
"""

from __future__ import annotations

from typing import Literal, get_args

# How a job ended: "cancelled" is stopped on request (suture.workers.producer.cancel), never by the engine.
FinalStatus = Literal["delivered", "soft_delivered", "refused", "failed", "cancelled"]
# A job's status as stored and as ``JobHandle.status()`` returns it.
JobStatus = Literal["queued", "running", "delivered", "soft_delivered", "refused", "failed", "cancelled"]
# What one attempt came to (``AttemptRecord.outcome``).
AttemptOutcome = Literal["valid", "improved", "no_better", "unparseable", "refused", "transport_error"]
# What became of one surgical slice (``SliceRecord.status``).
SliceStatus = Literal["applied", "rolled_back", "unparseable", "refused", "transport_error", "not_improving"]
# What one step of the job flow did (the return value of each ``Flow`` method and Celery task):
# applied/stored its work, found it done by another delivery (duplicate), found the job finished or
# the step no longer next (finished, stale, redirected, incomplete), counted it a poison, found the
# job expired (gone), or hit an internal error (error).
FlowOutcome = Literal[
    "applied",
    "stored",
    "duplicate",
    "stale",
    "finished",
    "redirected",
    "incomplete",
    "poisoned",
    "gone",
    "error",
]

FINAL_STATUSES: frozenset[str] = frozenset(get_args(FinalStatus))
# The statuses whose result carries an output (valid, or the best one after retries ran out).
DELIVERED_STATUSES: frozenset[str] = frozenset({"delivered", "soft_delivered"})
# What a flow step returns: a FlowOutcome, or for a step that delivered the job, its final status.
StepOutcome = FlowOutcome | FinalStatus
