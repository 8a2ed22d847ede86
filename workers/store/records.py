"""What the job store hands back: a job's record, a slice write's outcome, a task's opening read.

Plain frozen data parsed from Redis replies, apart from ``suture.workers.store.job_store`` so the store module
keeps
to its commands and scripts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from suture.tasks.job import JobState
    from suture.tasks.spec import JobSpec


@dataclass(frozen=True)
class JobRecord:
    """One job as stored: spec and state as parsed JSON, the CAS version, status and result.

    ``spec`` is the stored JSON; ``job_spec`` the same read through the ``JobSpec`` model, as the
    flow and the producer use it.
    """

    job_id: str
    spec: dict[str, Any]
    state: dict[str, Any] | None
    version: int
    status: str
    round: int
    deadline_s: float
    result: dict[str, Any] | None
    # Stored surgical actions by attempt number, as JSON text: parsed only by the task that needs one.
    raw_actions: dict[int, str] = field(default_factory=dict)
    created_s: float = 0.0
    started_s: float = 0.0  # when this round started: created_s, or the time of the last resume
    meta: dict[str, Any] = field(default_factory=dict)  # the producer's (e.g. a batch's source names)
    tenant: str | None = None  # the producer's tenant (``suture.workers.idempotency``), if it gave one

    @property
    def deadline_after_s(self) -> float:
        """The job's deadline as a duration from the start of its round (what a person configured)."""
        return max(0.0, self.deadline_s - self.started_s) if self.started_s else 0.0

    @cached_property
    def job_spec(self) -> JobSpec:
        """The stored spec read through ``JobSpec`` (raises ``UnreadableSpec`` for one this code cannot
        read)."""
        from suture.tasks.spec import JobSpec

        return JobSpec.read(self.job_id, self.spec)

    def delivered_state(self) -> JobState:
        """The engine state as delivered (the flow finishes a state only in the result it stores)."""
        from suture.tasks.job import JobState

        state = JobState.model_validate(self.state)
        if state.status is None and self.result is not None:
            state = state.model_copy(
                update={"status": self.result["status"], "reason": self.result["reason"]}
            )
        return state

    @property
    def finished(self) -> bool:
        """True once a result was delivered (the job is final until resumed)."""
        return self.result is not None

    def action(self, n: int) -> dict[str, Any] | None:
        """The stored action of attempt ``n``, if any."""
        raw = self.raw_actions.get(n)
        return dict(json.loads(raw)) if raw else None

    @classmethod
    def from_hash(cls, job_id: str, raw: dict[str, str]) -> JobRecord:
        """Parse the job's Redis hash (the caller checked that it holds a spec)."""
        actions = {int(k[7:]): v for k, v in raw.items() if k.startswith("action:") and k[7:].isdigit()}
        return cls(
            job_id=job_id,
            spec=json.loads(raw["spec"]),
            state=json.loads(raw["state"]) if raw.get("state") else None,
            version=int(raw.get("version", 0)),
            status=raw.get("status", "queued"),
            round=int(raw.get("round", 0)),
            deadline_s=float(raw.get("deadline_s", 0)),
            result=json.loads(raw["result"]) if raw.get("result") else None,
            raw_actions=actions,
            created_s=float(raw.get("created_s") or 0),
            started_s=float(raw.get("round_started_s") or raw.get("created_s") or 0),
            meta=_meta(raw.get("meta")),
            tenant=raw.get("tenant") or None,
        )


@dataclass(frozen=True)
class SliceOutcome:
    """What storing one slice reply did: stored now (not a redelivery), count so far, merge claimed."""

    stored: bool
    count: int
    merge_claimed: bool


@dataclass(frozen=True)
class TaskOpening:
    """A task's first read of its job, taken in one round trip with its execution counted.

    ``unfinished`` counts the task's executions that started and did not end, this one included
    (``suture.workers.flow.executions``; 0 when not counted: a slice whose reply is already stored makes no
    model call, so it cannot be a poison);
    ``slice_stored`` says whether the asked pointer's reply is in; ``slices`` holds every stored
    reply of the attempt when they were asked for.
    """

    record: JobRecord
    unfinished: int
    slice_stored: bool = False
    slices: dict[str, dict[str, Any]] = field(default_factory=dict)


def _meta(raw: str | None) -> dict[str, Any]:
    try:
        meta = json.loads(raw) if raw else {}
    except ValueError:  # written by a producer; never let it break a read
        return {}
    return meta if isinstance(meta, dict) else {}
