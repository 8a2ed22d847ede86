"""A batch's options and keys, and checks on what it reads back: a stored result, a manifest line.

``its_own`` refuses a stored result that names another job; ``manifest_record`` reads one line of
``jobs.jsonl`` and refuses one suture did not write (``BatchError`` is the runner's); ``checked``
demotes a delivered output that breaks the contract's schema to failed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from suture.config.settings import Settings
from suture.contracts.registry import contract_class
from suture.tasks.policy import Policy, load_policy, policy_from_mapping
from suture.tasks.policy_choice import policy_name
from suture.tasks.vocabulary import DELIVERED_STATUSES
from suture.workers.batch.knobs import identity
from suture.workers.batch.ledger import section_key
from suture.workers.documents import Section
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


def checked(result: dict[str, Any], contract_name: str = CONTRACT) -> dict[str, Any]:
    """Never pass an output that breaks the contract's schema as delivered: demote it to failed with the
    reason."""
    if result.get("status") not in DELIVERED_STATUSES:
        return result
    contract = contract_class(contract_name)
    try:
        contract.output_model.model_validate(result.get("output"))
    except ValidationError as exc:
        reason = (
            f"delivered output is not a valid {contract.title.lower()} ({exc.error_count()} schema "
            "errors); not written"
        )
        return result | {"status": "failed", "reason": reason, "output": None}
    return result


@dataclass(frozen=True)
class BatchOptions:
    """What the user asked for on the command line."""

    inputs: tuple[str, ...]
    out_dir: Path
    questions: int | None = None  # None: auto, from each section's length (batch.auto_questions)
    policy: str | None = None
    policy_rules: dict[str, Any] | None = None  # a user's policy file, read by the CLI; ``policy`` names it
    jobs_in_flight: int = 16
    wait: bool = True
    simulated: bool = False
    budget_usd: float | None = None
    contract: str = CONTRACT
    carry: bool = False  # an embedded stack: jobs in flight at Ctrl-C saved, finished by a rerun (``carry``)
    knobs: dict[str, Any] = field(default_factory=dict)  # question_kinds, language, difficulty, audience
    batch_api: str = "off"  # off | all | first: which calls go through OpenAI's Batch API (tasks.batch_mode)
    follow_symlinks: bool = False  # links named as inputs are read (never links inside folders)
    priority: str = "bulk"  # the jobs' class: a batch waits behind interactive work (docs/architecture.md)


def idempotency_key(
    section: Section,
    params: dict[str, Any],
    policy: str | None,
    contract: str = CONTRACT,
    policy_rules: dict[str, Any] | None = None,
    batch_api: str = "off",
) -> str:
    """Same contract, section text, parameters (rules included; the advisory ``avoid_questions`` aside)
    and policy (a file's content too) -> same job, wherever the file lives; an edited policy file makes
    new jobs. Also the section's ledger key. A Batch API mode other than off is part of it (the job's
    request differs), so switching it makes new jobs rather than an idempotency conflict."""
    batch_tag = f"|batch_api:{batch_api}" if batch_api != "off" else ""
    policy_tag = f"{policy or ''}{_rules_tag(policy_rules)}{batch_tag}"
    return section_key(contract, section.content_sha256, identity(params), policy_tag)


def _rules_tag(policy_rules: dict[str, Any] | None) -> str:
    if policy_rules is None:  # a configured policy: the key as before files travelled as data
        return ""
    return "|rules:" + hashlib.sha256(json.dumps(policy_rules, sort_keys=True).encode()).hexdigest()


def batch_policy(settings: Settings, options: BatchOptions) -> Policy:
    """The policy the batch's jobs run: the rules of the user's file, else the configured one."""
    if options.policy_rules is not None:
        return policy_from_mapping(options.policy or "file", options.policy_rules, settings)
    return load_policy(policy_name(options.policy, options.contract, settings), settings)


def batch_id(options: BatchOptions) -> str:
    """Groups the jobs of one output folder (example tier 2 reuses accepted outputs within it)."""
    policy = f"{options.policy or ''}{_rules_tag(options.policy_rules)}"
    raw = f"{options.out_dir.resolve()}|{options.questions}|{policy}"
    return "batch-" + hashlib.sha256(raw.encode()).hexdigest()[:16]
