"""Regenerate named questions of a batch's quiz from its output folder (no store needed): a targeted round.

After a batch on the default setup its stack is gone; the output folder holds what a targeted
round needs: the ledger (the job's section and rules), quizzes.jsonl (the quiz as it stands now,
a person's edits included) and the trace (the attempts so far). ``Regeneration.load`` rebuilds the
job's engine state from them and the section's text (re-read from its document and checked against
the recorded digest), ``run`` drives the engine's targeted round in this process
(``suture.tasks.targeted``: the policy's surgical steps on the targets only, under the contract's
invariants), and ``save`` writes the new quiz line (every other line unchanged), the trace with the
new attempts, and a ``regenerated`` ledger event with its cost.

Errors::

    RegenerateError   one line for the user: unknown job, moved or changed document, bad target
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suture.config.settings import Settings
from suture.contracts.failure import Failure
from suture.contracts.registry import build_contract
from suture.tasks.engine import EngineError, JobState, resume
from suture.tasks.job import Standing
from suture.tasks.policy import PolicyError, load_policy
from suture.tasks.policy_choice import policy_name
from suture.tasks.runner import Caller, drive
from suture.tasks.spec import EngineOptions, JobSpec
from suture.tasks.trace import AttemptRecord
from suture.workers.batch.kept import QUIZZES, read_quiz_lines
from suture.workers.batch.ledger import Entry, LedgerWriter, quiz_sha256, read_ledger
from suture.workers.batch.plan import make_plan
from suture.workers.jsonl import dumps_line
from suture.workers.output_folder import OutputFolder, check_job_id


class RegenerateError(Exception):
    """A targeted regeneration that cannot start; str() is one line for the user."""


@dataclass
class Regeneration:
    """One targeted round of one batch job, from its output folder."""

    out_dir: Path
    entry: Entry
    state: JobState
    policy_name: str | None

    @classmethod
    def load(cls, out_dir: Path, job_id: str, settings: Settings) -> Regeneration:
        """The job's state as the output folder holds it; ``RegenerateError`` if it cannot be rebuilt."""
        try:
            check_job_id(job_id)
        except Exception:
            raise RegenerateError(f"{job_id[:80]!r} is not a job id") from None
        entry = read_ledger(out_dir).by_job(job_id)
        if entry is None:
            raise RegenerateError(
                f"job {job_id} is not in {out_dir}/ledger.jsonl (is --out the batch's folder?)"
            )
        line = read_quiz_lines(out_dir / QUIZZES).get(job_id)
        if line is None or not isinstance(line.get("quiz"), dict):
            raise RegenerateError(f"job {job_id} has no quiz in {out_dir}/{QUIZZES}")
        trace = _read_trace(out_dir, job_id)
        spec_info = trace.get("spec") or trace  # the result carries contract, contract_params, policy
        params = dict(spec_info.get("contract_params") or {})
        policy = spec_info.get("policy")
        text = _section_text(entry, settings)
        spec = JobSpec(
            job_id=job_id,
            contract=str(spec_info.get("contract") or "quiz"),
            params=params,
            source=text,
            policy=policy,
            feedback=list(_feedback(trace)),
            simulated=bool(trace.get("simulated")),
            options=EngineOptions.from_settings(settings),
        )
        attempts = _attempts(trace)
        quiz = line["quiz"]
        verdict = build_contract(spec.contract, params, None, source=text).validate(quiz)
        best = Standing(n=len(attempts), output=quiz, failures=list(verdict.failures))
        status = "delivered" if verdict.ok else "soft_delivered"
        state = JobState(
            spec=spec,
            attempts=attempts,
            best=best,
            status=status,
            round=int(trace.get("round") or 0),
            last_failures=list(verdict.failures),
            next_step=0,
        )
        return cls(out_dir, entry, state, policy)

    def run(self, feedback: str, targets: list[str], caller: Caller, settings: Settings) -> dict[str, Any]:
        """Regenerate ``targets`` with ``feedback`` (none: a new round of the whole chain); returns the new
        result."""
        try:
            state = resume(self.state, feedback, targets)
        except EngineError as exc:
            raise RegenerateError(exc.problem) from None
        try:
            policy = load_policy(policy_name(self.policy_name, state.spec.contract, settings), settings)
        except PolicyError as exc:
            raise RegenerateError(f"the job's policy cannot be loaded here: {exc}") from None
        return drive(state, policy, caller, settings)

    def save(self, result: dict[str, Any]) -> float:
        """Write the new quiz line, the trace and the ledger event; returns this round's cost."""
        job_id = self.entry.job_id
        cost = float(result.get("cost_usd") or 0.0) - self.state.spent_usd
        if not isinstance(result.get("output"), dict):  # the quiz as it was stays; the cost is recorded
            self.record(
                "regenerated", {"status": self.entry.status, "cost_usd": round(cost, 8), "targets": []}
            )
            raise RegenerateError(
                f"the new round ended {result.get('status')}: {result.get('reason')}; nothing changed"
            )
        change = {
            "status": result["status"],
            "quiz": result["output"],
            "failures": result.get("failures") or [],
        }
        self.update_line(change)
        trace = json.dumps({"source": self.entry.source, **result}, indent=1, ensure_ascii=False)
        replace_file(self.out_dir, f"traces/{job_id}.json", trace)
        record = {
            "status": result["status"],
            "cost_usd": round(cost, 8),
            "targets": self.state_targets(result),
        }
        self.record("regenerated", record | {"output_sha256": quiz_sha256(result["output"])})
        return cost

    def update_line(self, change: dict[str, Any]) -> dict[str, Any]:
        """Change this job's quizzes.jsonl line (every other line as it is); returns the new line."""
        lines = read_quiz_lines(self.out_dir / QUIZZES)
        line = lines[self.entry.job_id] | change
        text = "".join(
            dumps_line(line if jid == self.entry.job_id else other) for jid, other in lines.items()
        )
        replace_file(self.out_dir, QUIZZES, text)
        return line

    def record(self, event: str, fields: dict[str, Any]) -> None:
        """Append a ledger event about this job."""
        writer = LedgerWriter(self.out_dir)
        try:
            entry = {
                "key": self.entry.key,
                "section_sha256": self.entry.section_sha256,
                "job_id": self.entry.job_id,
            }
            writer.write(event, entry | fields)
        finally:
            writer.close()

    @staticmethod
    def state_targets(result: dict[str, Any]) -> list[str]:
        """The targets the round regenerated, as its surgical attempts record them."""
        found: list[str] = []
        for attempt in result.get("attempts") or []:
            if attempt.get("round") == result.get("round") and attempt.get("mode") == "surgical":
                found += [s["pointer"] for s in attempt.get("slices") or [] if s.get("pointer") not in found]
        return found


def replace_file(out_dir: Path, relative: str, text: str) -> None:
    """Write ``relative`` whole through a temporary file renamed over it (never half-written, no link
    followed)."""
    temporary = relative + ".tmp"
    OutputFolder(out_dir).write_text(temporary, text)
    os.replace(out_dir / temporary, out_dir / relative)


def _read_trace(out_dir: Path, job_id: str) -> dict[str, Any]:
    path = out_dir / "traces" / f"{job_id}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if not path.is_symlink() else None
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict):
        raise RegenerateError(f"job {job_id} has no readable trace in {out_dir}/traces/")
    return data


def _attempts(trace: dict[str, Any]) -> list[AttemptRecord]:
    """The trace's attempts as engine records (failures back in their full form)."""
    records = []
    for raw in trace.get("attempts") or []:
        data = dict(raw)
        data["failures"] = [Failure.model_validate(f) for f in data.get("failures") or []]
        records.append(AttemptRecord.model_validate(data))
    return records


def _feedback(trace: dict[str, Any]) -> list[str]:
    spec = trace.get("spec") or {}
    return [str(f) for f in spec.get("feedback") or []]


def _section_text(entry: Entry, settings: Settings) -> str:
    """The section's text, re-read from its document; it must still be the text the quiz was made from."""
    file = entry.source.get("file")
    if not isinstance(file, str) or not Path(file).is_file():
        raise RegenerateError(
            f"the quiz's document {str(file)[:200]!r} is not there any more (run from where the batch ran)"
        )
    plan = make_plan([file], settings.batch)
    try:
        for section in plan.iter_sections():
            if section.content_sha256 == entry.section_sha256:
                return section.text
    finally:
        plan.discard()
    raise RegenerateError(f"{file} has changed since the quiz was made: rerun the batch instead")
