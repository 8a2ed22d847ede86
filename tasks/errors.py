"""Errors of the engine and its job data (policies have their own, ``suture.tasks.policy.PolicyError``).

EngineError(job_id, problem)       the engine was driven wrongly (a stale action, a result of an unfinished
job)
└── UnreadableSpec(job_id, problem) a stored job spec this code cannot read (a newer spec_version, bad
fields):
                                    the job fails with this reason rather than being misread
"""

from __future__ import annotations


class EngineError(Exception):
    """The engine was driven wrongly (an action out of order, a result of an unfinished job)."""

    def __init__(self, job_id: str, problem: str) -> None:
        self.job_id = job_id
        self.problem = problem
        super().__init__(f"job {job_id}: {problem}")


class UnreadableSpec(EngineError):
    """A job's stored spec cannot be read by this code; str() names the job and what is wrong."""

    def __init__(self, job_id: str, problem: str) -> None:
        super().__init__(job_id, f"unreadable job spec: {problem}")
