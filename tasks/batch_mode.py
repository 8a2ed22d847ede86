"""Which model calls of a job go through OpenAI's Batch API, and the line id each one gets.

Pure decisions shared by the flow (``suture.workers.flow.batch_rounds``) and its tests. A job's mode
is stored in its spec (``JobSpec.batch_api``): ``off`` sends every call online; ``all`` sends every
call (full attempts and surgical slices) as a batch line; ``first`` sends attempt 1 as a batch line
and every repair online, so a quiz that needs one waits for one batch, not one per repair.

A line's ``custom_id`` is the job id and the attempt (and, for a slice, a digest of its pointer):
the same call always has the same id, so recording it twice records one line, and the step run
again after its batch finds its reply by the same id.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from suture.config.batch_api_settings import BatchApiMode

__all__ = ["BatchApiMode", "CallKind", "custom_id", "through_batch"]

CallKind = Literal["full", "slice"]


def through_batch(mode: BatchApiMode | str | None, kind: CallKind, n: int) -> bool:
    """True if call ``n`` of this ``kind`` (a full attempt or a slice) goes through the Batch API."""
    if mode == "all":
        return True
    if mode == "first":
        return kind == "full" and n == 1
    return False


def custom_id(job_id: str, n: int, pointer: str | None = None) -> str:
    """The batch line id of attempt ``n`` of a job, or of its slice at ``pointer``."""
    if pointer is None:
        return f"{job_id}.a{n}"
    digest = hashlib.sha256(pointer.encode()).hexdigest()[:16]
    return f"{job_id}.s{n}.{digest}"
