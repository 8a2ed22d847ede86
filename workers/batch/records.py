"""Checks on what a batch reads back: a stored result, a manifest line.

``its_own`` refuses a stored result that names another job; ``manifest_record`` reads one line of
``jobs.jsonl`` and refuses one suture did not write (``BatchError`` is the runner's); ``checked``
demotes a delivered output that breaks the contract's schema to failed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from suture.contracts.registry import contract_class
from suture.tasks.vocabulary import DELIVERED_STATUSES
from suture.workers.output_folder import OutputFolderError, check_job_id

CONTRACT = "quiz"


class BatchError(Exception):
    """The batch as a whole cannot go on; str() is one line for the user."""


def its_own(job_id: str, result: dict[str, Any]) -> dict[str, Any]:
    """The stored result if it is the result of ``job_id``; else a failed result saying so.

    A result naming another job (or a path) means the store was written by someone else: nothing of
    it is written to --out, and no file is named after what it says.
    """
    if result.get("job_id") == job_id:
        return result
    reason = f"the stored result names another job ({str(result.get('job_id'))[:80]!r}); not written"
    return {"job_id": job_id, "status": "failed", "reason": reason, "output": None, "failures": []}


def manifest_record(path: Path, number: int, line: str) -> tuple[str, dict[str, Any]]:
    """One line of jobs.jsonl as (kind, record); a line that is not one suture wrote is a BatchError."""
    try:
        record = json.loads(line)
        kind = record.pop("type")
        if kind == "job":
            check_job_id(record["job_id"])  # a path will be built from it
    except (ValueError, KeyError, TypeError, AttributeError, OutputFolderError) as exc:
        problem = (
            exc if isinstance(exc, OutputFolderError) else f"not a record suture wrote ({type(exc).__name__})"
        )
        raise BatchError(f"cannot collect: {path} line {number}: {problem}") from None
    return kind, record


def checked(result: dict[str, Any]) -> dict[str, Any]:
    """Never pass an output that breaks the contract's schema as delivered: demote it to failed with the reason."""
    if result.get("status") not in DELIVERED_STATUSES:
        return result
    contract = contract_class(CONTRACT)
    try:
        contract.output_model.model_validate(result.get("output"))
    except ValidationError as exc:
        reason = f"delivered output is not a valid {contract.title.lower()} ({exc.error_count()} schema errors); not written"
        return result | {"status": "failed", "reason": reason, "output": None}
    return result
