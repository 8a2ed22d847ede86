"""Reading jobs back from the store: a job's record, status, result (waiting for it), history, slices.

Plain commands, one round trip each, no writes; ``workers.store.JobStore`` adds the once-only writes
on top. The key layout is drawn in the ``workers.store`` module docstring.
"""

from __future__ import annotations

import json
import time
from typing import Any

import redis

from workers.store_errors import JobNotFound, guarded
from workers.store_keys import Keys
from workers.store_records import JobRecord


class JobReads:
    """Reads of jobs in one Redis database, under the key names of ``keys``."""

    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self._r = client
        self._keys = keys

    @property
    def prefix(self) -> str:
        """The key prefix (other Redis records of a job, e.g. a batch's accepted outputs, share it)."""
        return self._keys.prefix

    @property
    def redis(self) -> redis.Redis:
        """The underlying client (for the rate limiter and the watchdog lock)."""
        return self._r

    def load(self, job_id: str) -> JobRecord:
        """The job as stored; raises JobNotFound."""
        raw = guarded(lambda: self._r.hgetall(self._keys.job(job_id)))
        if not raw or "spec" not in raw:
            raise JobNotFound(job_id)
        return JobRecord.from_hash(job_id, raw)

    def status(self, job_id: str) -> str:
        """The job's status string; raises JobNotFound."""
        status = guarded(lambda: self._r.hget(self._keys.job(job_id), "status"))
        if status is None:
            raise JobNotFound(job_id)
        return str(status)

    def result(self, job_id: str) -> dict[str, Any] | None:
        """The delivered result, or None while the job runs; raises JobNotFound."""
        status, raw = guarded(lambda: self._r.hmget(self._keys.job(job_id), ["status", "result"]))
        if status is None:
            raise JobNotFound(job_id)
        return json.loads(raw) if raw else None

    def wait_result(self, job_id: str, timeout_s: float | None) -> dict[str, Any] | None:
        """The result, waiting up to ``timeout_s`` (None: forever) for the delivery notice."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        result = self.result(job_id)
        if result is not None:  # already delivered: no subscription (a pub/sub connection is not pooled)
            return result
        pubsub = self._r.pubsub(ignore_subscribe_messages=True)
        try:
            # Subscribe before reading, so a delivery between the two cannot be missed.
            guarded(lambda: pubsub.subscribe(self._keys.done(job_id)))
            while True:
                result = self.result(job_id)
                if result is not None:
                    return result
                remaining = 1.0 if deadline is None else deadline - time.monotonic()
                if remaining <= 0:
                    return None
                # Re-read at least every second: a resumed job publishes again on the same channel.
                wait_s = min(remaining, 1.0)
                guarded(lambda: pubsub.get_message(timeout=wait_s))  # noqa: B023
        finally:
            pubsub.close()

    def history(self, job_id: str) -> list[dict[str, Any]]:
        """Results delivered before each resume, oldest first."""
        raw = guarded(lambda: self._r.lrange(self._keys.history(job_id), 0, -1))
        return [json.loads(item) for item in raw]

    def slices(self, job_id: str, n: int) -> dict[str, dict[str, Any]]:
        """Every stored slice reply of surgical attempt ``n``, by pointer."""
        raw = guarded(lambda: self._r.hgetall(self._keys.slices(job_id, n)))
        return {pointer: json.loads(value) for pointer, value in raw.items()}
