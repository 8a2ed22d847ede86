"""Jobs a Ctrl-C left half done on an embedded stack, finished by the rerun from where they stopped.

An embedded stack's Redis goes with it, so the jobs in flight at Ctrl-C would start over on a rerun
and their finished attempts would be paid twice. Instead ``Books.interrupted`` saves each one's
engine state (``partial/<job>.json``: every attempt applied, the best output, the prompts sent) and
the rerun finishes it here (``Carried``): the engine is driven in this process from that state
(``suture.tasks.runner.drive``, the driver of ``generate --inline``), on the stack's model
endpoint, a thread per job, at most ``jobs_in_flight`` of them. Only a call in flight at Ctrl-C is
lost. Its result is written like any job's, under the same job id.
"""

from __future__ import annotations

import json
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from suture.config.settings import Settings
from suture.tasks.job import JobState
from suture.tasks.policy import Policy, load_policy, policy_from_mapping
from suture.tasks.policy_choice import policy_name
from suture.tasks.runner import drive
from suture.tasks.spec import EngineOptions, JobSpec
from suture.workers.output_folder import JOB_ID, OutputFolder

PARTIAL = "partial"


def save_partial(out_dir: Path, job_id: str, state: dict[str, Any]) -> str:
    """Write a job's engine state under ``partial/``; returns its relative path."""
    relative = OutputFolder(out_dir).job_file(PARTIAL, job_id, ".json")
    OutputFolder(out_dir).write_text(relative, json.dumps(state, ensure_ascii=False))
    return relative


def load_partial(out_dir: Path, relative: str | None, job_id: str, section_text: str) -> JobState | None:
    """The saved state of ``job_id`` if it is there, readable, and made from this very section text."""
    if not relative or not JOB_ID.fullmatch(job_id) or relative != f"{PARTIAL}/{job_id}.json":
        return None
    path = out_dir / relative
    if path.is_symlink() or not path.is_file():
        return None
    try:
        state = JobState.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if state.spec.job_id != job_id or state.spec.source != section_text or state.status is not None:
        return None
    return state if state.attempts else None


class Carried:
    """The half-done jobs this run finishes in-process: job id -> (future result, plan position, source)."""

    def __init__(self, settings: Settings, workers: int) -> None:
        self.settings, self.workers = settings, workers
        self.running: dict[str, tuple[Future[dict[str, Any]], int, dict[str, Any]]] = {}
        self.pool: ThreadPoolExecutor | None = None

    def __len__(self) -> int:
        return len(self.running)

    def start(self, state: JobState, seq: int, source: dict[str, Any]) -> None:
        """Finish ``state``'s job in a thread of this process."""
        from suture.workers.model.client import get_model_client

        if self.pool is None:
            self.pool = ThreadPoolExecutor(
                max_workers=max(1, self.workers), thread_name_prefix="suture-carry"
            )
        spec = state.spec
        options = EngineOptions.from_settings(self.settings)
        state = state.model_copy(update={"spec": spec.model_copy(update={"options": options})})
        policy = spec_policy(spec, self.settings)
        caller = get_model_client(self.settings).call
        future = self.pool.submit(drive, state, policy, caller, self.settings)
        self.running[spec.job_id] = (future, seq, source)

    def finished(self) -> list[tuple[str, int, dict[str, Any], dict[str, Any]]]:
        """The jobs that ended since the last call: (job id, plan position, source, result)."""
        done = []
        for job_id, (future, seq, source) in list(self.running.items()):
            if future.done():
                del self.running[job_id]
                done.append((job_id, seq, source, _result(job_id, future)))
        return done

    def stop(self) -> None:
        """Drop what has not started; threads waiting on a model are not waited for."""
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)


def spec_policy(spec: JobSpec, settings: Settings) -> Policy:
    """The policy a job runs: the user's file stored with it as data, else the configured one it names."""
    if spec.policy_rules is not None:
        return policy_from_mapping(spec.policy or "file", spec.policy_rules, settings)
    return load_policy(policy_name(spec.policy, spec.contract, settings), settings)


def _result(job_id: str, future: Future[dict[str, Any]]) -> dict[str, Any]:
    try:
        return future.result()
    except Exception as exc:  # the engine raised: the job failed, the batch goes on
        reason = f"finishing the interrupted job failed: {type(exc).__name__}: {exc}"[:500]
        return {"job_id": job_id, "status": "failed", "reason": reason, "output": None, "failures": []}
