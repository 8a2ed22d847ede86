"""A batch's budget (``--budget-usd``): a section starts only while it fits.

What fits: the cost spent so far, plus the expected cost of the jobs in flight and of this section's
job, stays within the limit. A job's expected cost comes from the price table and the policy's
measured repair overhead (``suture.workers.batch.estimate``) until a few jobs have finished; from then
on, the mean cost of this batch's finished jobs. The sections left are listed in the report as not
started.
"""

from __future__ import annotations

from collections.abc import Iterator

from suture.config.settings import Settings
from suture.workers.batch.estimate import Estimator
from suture.workers.batch.records import BatchOptions, batch_policy
from suture.workers.documents import Section
from suture.workers.reports.batch_report import BatchReport

# Once this many jobs have finished, their mean cost replaces the estimate in the budget projection.
MEASURED_AFTER_JOBS = 3


class BatchBudget:
    """The limit of one batch run and the expected cost of its jobs in flight."""

    def __init__(self, settings: Settings, options: BatchOptions) -> None:
        self.limit_usd = options.budget_usd
        self.expected_usd: dict[str, float] = {}  # job id (section sha256 until enqueued) -> expected cost
        self.estimator: Estimator | None = None
        if self.limit_usd is not None:
            questions = options.questions or settings.batch.auto_questions.max_questions
            self.estimator = Estimator(
                settings, batch_policy(settings, options), questions, options.batch_api
            )

    def admits(self, section: Section, questions: int | None, report: BatchReport) -> bool:
        """Whether ``section``'s job (of ``questions``) fits; if so its expected cost is held for it."""
        if self.estimator is None or self.limit_usd is None:
            return True
        finished = sum(report.status_counts.values())
        guess = self.estimator.job(len(section.text), questions).cost_usd or 0.0
        if finished >= MEASURED_AFTER_JOBS:
            guess = report.cost_usd / finished  # what this batch's jobs really cost
        projected = report.cost_usd + sum(self.expected_usd.values()) + guess
        if projected > self.limit_usd:
            return False
        self.expected_usd[section.content_sha256] = guess
        return True

    def enqueued(self, section: Section, job_id: str) -> None:
        """The section's job has its id now: its expected cost is held under it."""
        if section.content_sha256 in self.expected_usd:
            self.expected_usd[job_id] = self.expected_usd.pop(section.content_sha256)

    def finished(self, job_id: str) -> None:
        """The job's real cost is in the report now."""
        self.expected_usd.pop(job_id, None)

    def stop(self, report: BatchReport, first: Section, rest: Iterator[Section]) -> None:
        """List the sections left as not started, and the limit that stopped them."""
        report.add_not_started(first.describe())
        for section in rest:
            report.add_not_started(section.describe())
        report.budget = {"limit_usd": self.limit_usd}
