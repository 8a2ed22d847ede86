"""``suture batch --dry-run``: the sections per document and what the batch should cost and take.

Reads only the plan (the documents, already read) and the settings: no stack is started, no job
enqueued, no model called. Figures come from ``suture.workers.batch.estimate``, the time times the
wall-time ratio batches measured on this machine (``suture.workers.batch.timing``); each section's
question count from ``suture.workers.batch.knobs`` (with ``--questions auto``, a section too short
for a quiz is shown as skipped, with the reason, and not counted).
"""

from __future__ import annotations

import sys
from typing import TextIO

from suture.config.settings import Settings
from suture.workers.batch.estimate import BatchEstimate, Estimator
from suture.workers.batch.knobs import questions_for, too_short
from suture.workers.batch.plan import BatchPlan
from suture.workers.batch.records import BatchOptions, batch_policy
from suture.workers.batch.timing import WallRatio, wall_ratio
from suture.workers.printable import shown


def print_dry_run(
    plan: BatchPlan, settings: Settings, options: BatchOptions, out: TextIO | None = None
) -> None:
    """Print every document's sections, the skipped inputs, and the batch's estimate."""
    out = out or sys.stdout
    policy = batch_policy(settings, options)
    auto = settings.batch.auto_questions
    estimator = Estimator(settings, policy, options.questions or auto.max_questions, options.batch_api)
    total, short = BatchEstimate(), 0
    current = None
    for section in plan.iter_sections():
        if section.source != current:
            current = section.source
            print(f"{shown(current)}: {plan.documents[current]} section(s)", file=out)
        pages = "" if section.page_start is None else f", {_pages(section.page_start, section.page_end)}"
        head = (
            f"  §{section.index} {shown(section.title or '(untitled)')}: {len(section.text):,} chars{pages}"
        )
        questions = questions_for(len(section.text), options.questions, auto)
        if questions is None:
            short += 1
            print(f"{head}: skipped: {too_short(len(section.text), auto)}", file=out)
            continue
        job = estimator.job(len(section.text), questions)
        total.add(job)
        cost = "" if job.cost_usd is None else f", ~${job.cost_usd:.4f}"
        print(f"{head}, {questions} questions{cost}", file=out)
    for issue in plan.skipped:
        print(f"skipped: {shown(issue.source)}: {issue.reason}: {shown(issue.detail)}", file=out)
    print(
        f"{plan.sections} section(s) in {len(plan.documents)} document(s); {len(plan.skipped)} input file(s) "
        f"skipped; {short} section(s) too short for a quiz",
        file=out,
    )
    print(_estimate_line(total, estimator, options, policy.name, wall_ratio(settings)), file=out)
    print("dry run: no stack started, no job enqueued, no model called", file=out)


def estimated_wall_s(plan: BatchPlan, settings: Settings, options: BatchOptions) -> float | None:
    """The plan's model-time estimate with the batch's jobs in flight (no wall-time ratio): what a finished
    batch's wall time is measured against (``timing.record``)."""
    auto = settings.batch.auto_questions
    estimator = Estimator(
        settings, batch_policy(settings, options), options.questions or auto.max_questions, options.batch_api
    )
    total = BatchEstimate()
    for section in plan.iter_sections():
        questions = questions_for(len(section.text), options.questions, auto)
        if questions is not None:
            total.add(estimator.job(len(section.text), questions))
    return total.wall_s(options.jobs_in_flight)


def _estimate_line(
    total: BatchEstimate, estimator: Estimator, options: BatchOptions, policy: str, ratio: WallRatio
) -> str:
    overhead = estimator.policy.repair_overhead
    questions = "auto questions" if options.questions is None else f"{options.questions} questions"
    head = f"estimate (policy {policy}, {questions}, first model {estimator.model}): "
    if total.cost_usd is None:
        cost = f"cost unknown ({estimator.model} is not in the price table)"
    elif overhead is None:
        cost = f"${total.cost_usd:.4f} for first attempts only (the policy has no measured repair_overhead)"
    else:
        cost = (
            f"${total.cost_usd:.4f} (first attempts ${total.first_attempts_usd or 0:.4f} x repair "
            f"overhead {overhead.cost:g})"
        )
    wall = total.wall_s(options.jobs_in_flight)
    if wall is None:
        time = f"time unknown ({estimator.model} has no estimate.model_speeds entry)"
    elif options.batch_api != "off":
        time = "results within the Batch API's 24 h window"
    else:
        time = (
            f"about {_duration(wall * ratio.ratio)} with {options.jobs_in_flight} jobs in flight "
            f"({_duration(wall)} of model time {ratio.describe()})"
        )
    return head + cost + "; " + time


def _pages(start: int, end: int | None) -> str:
    return f"p. {start}" if end in (None, start) else f"pp. {start}-{end}"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
