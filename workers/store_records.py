"""What the job store hands back: a job's record, a slice write's outcome, a task's opening read.

Plain frozen data parsed from Redis replies, apart from ``workers.store`` so the store module keeps
to its commands and scripts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class JobRecord:
    """One job as stored: spec and state as parsed JSON, the CAS version, status and result."""

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
    (``workers.executions``; 0 when not counted: a slice whose reply is already stored makes no
    model call, so it cannot be a poison);
    ``slice_stored`` says whether the asked pointer's reply is in; ``slices`` holds every stored
    reply of the attempt when they were asked for.
    """

    record: JobRecord
    unfinished: int
    slice_stored: bool = False
    slices: dict[str, dict[str, Any]] = field(default_factory=dict)
