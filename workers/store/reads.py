"""Reading jobs back from the store: a job's record, status, result (waiting for it), history, slices.

Plain commands, one round trip each, no writes; ``suture.workers.store.job_store.JobStore`` adds the once-only
writes
on top. The key layout is drawn in the ``suture.workers.store.job_store`` module docstring.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import redis

from suture.workers.errors import JobNotFound
from suture.workers.store.completions import Completions
from suture.workers.store.errors import guarded
from suture.workers.store.keys import Keys
from suture.workers.store.records import JobRecord
from suture.workers.store.scripts import INDEX_REVIEW, REVIEW_LISTS

# Entries of the review list of every job indexed per tenant by one script call: a few ms of Redis time.
INDEX_BATCH = 1000


class JobReads:
    """Reads of jobs in one Redis database, under the key names of ``keys``."""

    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self._r = client
        self._keys = keys
        self._completions = Completions(client, keys.prefix)
        self._index_review = client.register_script(INDEX_REVIEW)
        self._review_lists = client.register_script(REVIEW_LISTS)

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

    def job_for_key(self, idempotency_key: str) -> tuple[str, str] | None:
        """The job an idempotency key (as stored: scoped) names, with its request's sha256; None if none."""
        value = guarded(lambda: self._r.get(self._keys.idempotency(idempotency_key)))
        if not value:
            return None
        job_id, _, sha256 = str(value).partition(" ")
        return job_id, sha256

    def status(self, job_id: str) -> str:
        """The job's status string; raises JobNotFound."""
        status = guarded(lambda: self._r.hget(self._keys.job(job_id), "status"))
        if status is None:
            raise JobNotFound(job_id)
        return str(status)

    def tenant(self, job_id: str) -> str | None:
        """The tenant the job was enqueued for (None: none was given); raises JobNotFound."""
        status, tenant = guarded(lambda: self._r.hmget(self._keys.job(job_id), ["status", "tenant"]))
        if status is None:
            raise JobNotFound(job_id)
        return str(tenant) if tenant else None

    def result(self, job_id: str) -> dict[str, Any] | None:
        """The delivered result, or None while the job runs; raises JobNotFound."""
        status, raw = guarded(lambda: self._r.hmget(self._keys.job(job_id), ["status", "result"]))
        if status is None:
            raise JobNotFound(job_id)
        return json.loads(raw) if raw else None

    def wait_result(self, job_id: str, timeout_s: float | None) -> dict[str, Any] | None:
        """The result, waiting up to ``timeout_s`` (None: forever) for the delivery notice.

        Waiters share the process's one subscription (``completions``): a thousand of them hold no
        connection while they wait.
        """
        return self._completions.wait(job_id, lambda: self.result(job_id), timeout_s)

    def history(self, job_id: str) -> list[dict[str, Any]]:
        """Results delivered before each resume, oldest first."""
        raw = guarded(lambda: self._r.lrange(self._keys.history(job_id), 0, -1))
        return [json.loads(item) for item in raw]

    def waiting_review(
        self, limit: int, tenants: Sequence[str | None] | None = None
    ) -> list[tuple[str, float]]:
        """Soft-delivered jobs waiting for a person, newest first: ``(job id, delivered at)``.

        ``tenants`` None: every job's (a trusted reader). Else the jobs of those tenants only (None: the
        operator's, enqueued without a tenant), each read from its tenant's own list: another tenant's
        jobs, however many, never take a place in the window.
        """
        if tenants is None:
            raw = guarded(lambda: self._r.zrevrange(self._keys.review(), 0, limit - 1, withscores=True))
            return [(str(job_id), float(when)) for job_id, when in raw]
        self.index_review()
        keys = [self._keys.review(), *(self._keys.review_of(t) for t in dict.fromkeys(tenants))]
        lists = guarded(lambda: self._review_lists(keys=keys, args=[self._keys.job(""), limit]))
        found = [(str(i), float(at)) for flat in lists for i, at in zip(flat[::2], flat[1::2], strict=True)]
        return sorted(found, key=lambda entry: entry[1], reverse=True)[:limit]

    def index_review(self) -> int:
        """List on their tenants' review lists the soft-delivered jobs the review list of every job holds
        and they lack: those of a store from before the tenants' lists, or listed since by a process of an
        older version. Reads only what was listed since the last call, a bounded batch per script call;
        returns how many entries it read."""
        keys = [self._keys.review(), self._keys.review_indexed()]
        args: list[str | int] = [self._keys.job(""), self._keys.review_tenants(), INDEX_BATCH]
        total = 0
        while True:
            read, moved = guarded(lambda: self._index_review(keys=keys, args=args))
            total += int(read)
            if int(read) < INDEX_BATCH or not int(moved):
                return total

    def forget_review(self, job_id: str) -> None:
        """Drop a job from the review list (it expired from the store)."""
        guarded(lambda: self._r.zrem(self._keys.review(), job_id))

    def slices(self, job_id: str, n: int) -> dict[str, dict[str, Any]]:
        """Every stored slice reply of surgical attempt ``n``, by pointer."""
        raw = guarded(lambda: self._r.hgetall(self._keys.slices(job_id, n)))
        return {pointer: json.loads(value) for pointer, value in raw.items()}

    def running_tasks(self, job_id: str, version: int) -> list[str]:
        """Tasks of the job's next attempt that started and have not finished (``attempt:3``,
        ``slice:2:/q/1``).

        Read from the executions the poison cap counts (``suture.workers.flow.executions``): a task of an
        attempt beyond ``version`` with an execution still counted is running, or died with its worker.
        A slice whose reply is already stored is done.
        """
        flags = guarded(lambda: self._r.hgetall(self._keys.flags(job_id)))
        running: list[str] = []
        for name, count in sorted(flags.items()):
            task_key = name.removeprefix("unfinished:")
            if task_key == name or int(count or 0) <= 0 or _attempt_of(task_key) <= version:
                continue
            if task_key.startswith("slice:"):
                _, n, pointer = task_key.split(":", 2)
                stored = guarded(lambda: self._r.hexists(self._keys.slices(job_id, int(n)), pointer))  # noqa: B023
                if stored:
                    continue
            running.append(task_key)
        return running


def _attempt_of(task_key: str) -> int:
    """The attempt number in a task key (``attempt:3``, ``slice:3:/p``, ``merge:3``); 0 if it has none."""
    parts = task_key.split(":", 2)
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
