"""Model replies paid for but not stored: kept in the worker process, so a step re-run uses them again.

A step calls the model, then stores what came back (an attempt's new state, a slice reply). When that write
fails (Redis cut off by a partition, a failover refusing the write for want of a replica), the step re-runs
in-process once Redis answers again (``suture.workers.runtime.tasks``: re-runs through outages), from the
store's state. Without this it would call the model again: the first call paid, and in no trace. The reply
is kept here, under the job, the task and the very call; a re-run that asks for the same call (same job
state, so the same prompt) takes it instead of calling. A re-run that finds the job moved on (another
execution applied the step) never asks for it, and it ages out.

Only this process holds them: a worker killed, or a message requeued to another worker after the in-process
re-runs ran out, pays the call again (docs/reliability.md says what is left).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from suture.tasks.calls import ModelCall, ModelReply

# Replies kept at most (the oldest dropped first): a step keeps one only while Redis refuses its write.
MAX_KEPT = 512


class KeptReplies:
    """Replies whose write failed, by (job id, task key), each with the call it answered."""

    def __init__(self, limit: int = MAX_KEPT) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[str, str], tuple[ModelCall, ModelReply]] = OrderedDict()

    def keep(self, job_id: str, task_key: str, call: ModelCall, reply: ModelReply) -> None:
        """Keep ``reply`` to ``call`` for a re-run of the task (its write failed)."""
        with self._lock:
            self._kept[(job_id, task_key)] = (call, reply)
            self._kept.move_to_end((job_id, task_key))
            while len(self._kept) > self._limit:
                self._kept.popitem(last=False)

    def take(self, job_id: str, task_key: str, call: ModelCall) -> ModelReply | None:
        """The kept reply to this very call of the task (then no longer kept), or None."""
        with self._lock:
            kept = self._kept.pop((job_id, task_key), None)
        if kept is None or kept[0] != call:
            return None
        return kept[1]
