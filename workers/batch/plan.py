"""A batch's plan: every section to quiz, read once before the first job, in document order.

``make_plan(inputs, limits, spool_dir)`` reads the documents (``suture.workers.documents``) and
writes each section to a spool file, one JSON line each, so the batch knows its section count
up front (``[1/42]`` and an ETA from the start, a dry run, a budget) while memory stays bounded
whatever the corpus: sections are streamed back from the spool as jobs are started. A section's
position in the plan (``seq``) is its place in the output: quizzes.jsonl follows document order
(inputs in the order given, folders in sorted order, sections in order), whatever order the jobs
finish in. Input issues (files skipped or noted) are kept in the plan, and also passed to
``on_issue`` as they are met.

This is the seam for a batch ledger: a plan entry is what a later run compares (by section
content) to decide what is already done.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from suture.config.settings import BatchSettings
from suture.workers.documents import InputIssue, Section, iter_documents
from suture.workers.jsonl import write_line


@dataclass
class BatchPlan:
    """The sections of a batch (spooled on disk), their count per document, and the input issues."""

    spool: Path
    sections: int = 0
    chars: int = 0
    documents: Counter[str] = field(default_factory=Counter)
    issues: list[InputIssue] = field(default_factory=list)

    @property
    def skipped(self) -> list[InputIssue]:
        """The input files that will not be quizzed at all."""
        return [issue for issue in self.issues if issue.skipped]

    def iter_sections(self) -> Iterator[Section]:
        """The sections in plan order, read back from the spool."""
        with self.spool.open(encoding="utf-8") as lines:
            for line in lines:
                raw = json.loads(line)
                yield Section(**{**raw, "notes": tuple(raw.get("notes") or ())})

    def discard(self) -> None:
        """Remove the spool file (the plan is rebuilt by every run)."""
        self.spool.unlink(missing_ok=True)


def make_plan(
    inputs: Iterable[str | Path],
    limits: BatchSettings,
    spool_dir: Path | None = None,
    on_issue: Callable[[InputIssue], None] | None = None,
    *,
    follow_symlinks: bool = False,
) -> BatchPlan:
    """Read every input document into a plan; raises ``InputNotFound`` for a missing input.

    The spool goes to ``spool_dir`` (default: the system's temporary folder) and is removed by
    ``discard``.
    """
    if spool_dir is not None:
        spool_dir.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix="suture-plan-", suffix=".jsonl", dir=spool_dir)
    plan = BatchPlan(spool=Path(name))
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as spool:
            for item in iter_documents(inputs, limits, follow_symlinks=follow_symlinks):
                if isinstance(item, InputIssue):
                    plan.issues.append(item)
                    if on_issue is not None:
                        on_issue(item)
                    continue
                write_line(spool, _section_record(item))
                plan.sections += 1
                plan.chars += len(item.text)
                plan.documents[item.source] += 1
    except BaseException:
        plan.discard()
        raise
    return plan


def _section_record(section: Section) -> dict[str, Any]:
    record = asdict(section)
    record["notes"] = list(section.notes)
    return record
