"""What a rerun keeps: the sections the ledger says are done, with the quiz as ``quizzes.jsonl`` holds it now.

``Previous.load(out_dir)`` reads the ledger and the current ``quizzes.jsonl`` before the run
rewrites it. ``Previous.keep(section, key, params)`` answers, for a section the ledger calls done,
the line to write back (the quiz as the person left it), the result the report folds in (from the
job's trace, costing nothing this run) and the ledger event to record, if any: a quiz whose digest
differs from the one recorded was edited by hand, so it is validated against the contract, its
failures reported, and it is kept, never regenerated. A done section whose line is gone is restored
from its trace (or, if a person edited it, from the ledger); with neither, it runs again.

Errors::

    KeptError   quizzes.jsonl holds a line that is not JSON (a hand edit gone wrong): nothing is overwritten
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suture.contracts.registry import build_contract
from suture.workers.batch.ledger import Entry, LedgerState, quiz_sha256, read_ledger
from suture.workers.documents import Section
from suture.workers.output_folder import JOB_ID

QUIZZES = "quizzes.jsonl"


class KeptError(Exception):
    """The output folder holds something a rerun would lose; str() is one line for the user."""


@dataclass(frozen=True)
class Kept:
    """A done section: its quizzes.jsonl line (None for a refused one), report result, trace, ledger event."""

    job_id: str
    line: dict[str, Any] | None
    result: dict[str, Any]
    trace: str
    event: tuple[str, dict[str, Any]] | None
    touched: str | None


class Previous:
    """The ledger and the quizzes.jsonl lines of earlier runs in one output folder."""

    def __init__(self, out_dir: Path, ledger: LedgerState, lines: dict[str, dict[str, Any]]) -> None:
        self.out_dir, self.ledger, self.lines = out_dir, ledger, lines

    @classmethod
    def load(cls, out_dir: Path) -> Previous:
        """Read ``out_dir``'s ledger and quizzes.jsonl (both may be missing)."""
        return cls(out_dir, read_ledger(out_dir), read_quiz_lines(out_dir / QUIZZES))

    def keep(self, contract: str, section: Section, key: str, params: dict[str, Any]) -> Kept | None:
        """The kept form of ``section`` if the ledger calls it done, else None (it runs)."""
        entry = self.ledger.done(key, section.content_sha256)
        if entry is None or not JOB_ID.fullmatch(entry.job_id):
            return None
        trace_path = f"traces/{entry.job_id}.json"
        trace = _read_json(self.out_dir / trace_path) or {}
        if entry.status == "refused":
            return Kept(entry.job_id, None, _result(trace, entry), trace_path, None, None)
        quiz = self._current_quiz(entry, trace)
        if quiz is None:
            return None
        sha = quiz_sha256(quiz)
        newly_edited = entry.output_sha256 is not None and sha != entry.output_sha256
        touched = "edited" if newly_edited else entry.touched
        failures: list[dict[str, Any]] = list(self.lines.get(entry.job_id, {}).get("failures") or [])
        status = entry.status
        event = None
        if touched is not None:
            verdict = build_contract(contract, params, None, source=section.text).validate(quiz)
            failures = [f.public() for f in verdict.failures]
            status = "delivered" if verdict.ok or touched == "accepted" else "soft_delivered"
        if newly_edited:
            record: dict[str, Any] = {
                "key": key,
                "section_sha256": section.content_sha256,
                "job_id": entry.job_id,
            }
            record |= {"status": status, "output_sha256": sha, "output": quiz, "failures": failures}
            event = ("edited", record | {"source": section.describe()})
        line: dict[str, Any] = {"source": section.describe(), "job_id": entry.job_id, "status": status}
        line |= {"quiz": quiz, "failures": failures}
        if touched is not None:
            line[touched] = True
        if entry.touched == "accepted" or self.lines.get(entry.job_id, {}).get("accepted"):
            line["accepted"] = True
        result = _result(trace, entry) | {"status": status, "output": quiz, "failures": failures}
        return Kept(entry.job_id, line, result, trace_path, event, touched)

    def _current_quiz(self, entry: Entry, trace: dict[str, Any]) -> Any:
        line = self.lines.get(entry.job_id)
        if line is not None and isinstance(line.get("quiz"), dict):
            return line["quiz"]
        if entry.touched == "edited" and isinstance(entry.output, dict):
            return entry.output
        output = trace.get("output")
        return output if isinstance(output, dict) else None


def _result(trace: dict[str, Any], entry: Entry) -> dict[str, Any]:
    """The job's result as its trace holds it (the report reads attempts, cost, codes from it)."""
    result = {k: v for k, v in trace.items() if k != "source"}
    return {"status": entry.status, "failures": [], **result, "job_id": entry.job_id}


def read_quiz_lines(path: Path) -> dict[str, dict[str, Any]]:
    """quizzes.jsonl as job id -> line; ``KeptError`` for a line that is not a JSON object."""
    lines: dict[str, dict[str, Any]] = {}
    if path.is_symlink() or not path.is_file():
        return lines
    with path.open(encoding="utf-8", newline="\n") as stream:
        for number, raw in enumerate(stream, 1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
            except ValueError as exc:
                if not raw.endswith("\n"):
                    continue  # the last line, cut while it was written (the run was stopped): rewritten now
                raise KeptError(
                    f"{path} line {number} is not JSON ({exc}): fix the hand edit or remove the line; "
                    "nothing was overwritten"
                ) from None
            if isinstance(line, dict) and isinstance(line.get("job_id"), str):
                lines[line["job_id"]] = line
    return lines


def _read_json(path: Path) -> dict[str, Any] | None:
    if path.is_symlink() or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
