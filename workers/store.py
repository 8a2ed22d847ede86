"""The Redis job store: a job's spec, engine state, slice replies and result, keyed by job id.

Celery messages carry only job ids; everything else lives here, and every write that must
happen once (an attempt applied, a slice stored, a merge scheduled, a delivery) is one atomic
Lua script, so redelivered tasks cannot add a second record.

Layout (``{p}`` is the key prefix, ``suture`` by default)::

    {p}:job:<id>            hash: spec, state, version, status, round, created_s, deadline_s, result
    {p}:job:<id>:history    list: results delivered before each resume (raw JSON, oldest first)
    {p}:job:<id>:flags      hash: once-flags (merge:<n>; callback:<round> leased "owner|until_s", then "sent") and delivery counters
    {p}:job:<id>:slices:<n> hash: pointer -> slice reply JSON of surgical attempt n
    {p}:idem:<key>          string: the job id an idempotency key maps to
    {p}:batch:<b>:accepted  list: a batch's valid outputs for example tier 2 (workers/accepted.py)
    {p}:deadlines           sorted set: running job ids scored by their deadline (the watchdog's list)
    {p}:progress            sorted set: job ids scored by the last time one of their tasks opened
    {p}:done:<id>           pub/sub channel: the status, published once when the result is stored

``version`` counts the attempts applied to ``state``; applying attempt ``n`` is a compare-and-set
from version ``n - 1``. Errors::

    StoreError
     ├── JobNotFound        (job_id)         unknown or expired job
     └── StoreUnavailable   (reason)         Redis cannot be reached (URL password never shown)
"""

from __future__ import annotations

import json
import time
from functools import cache
from typing import Any

import redis

from config.settings import Settings
from workers.store_records import JobRecord, SliceOutcome, TaskOpening
from workers.store_scripts import (
    BEGIN,
    CREATE,
    DELIVER,
    LEASE,
    OPEN_TASK,
    PUT_SLICE,
    RESUME,
    SAVE_AND_DELIVER,
    SAVE_STATE,
)

FINAL_STATUSES = frozenset({"delivered", "soft_delivered", "refused", "failed"})


class StoreError(Exception):
    """Base of the job store's errors."""


class JobNotFound(StoreError):
    """The job id is unknown (never enqueued, or expired from Redis)."""

    def __init__(self, job_id: str) -> None:
        super().__init__(f"no such job: {job_id}")
        self.job_id = job_id


class StoreUnavailable(StoreError):
    """Redis could not be reached or refused the command; the message never contains a password."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"job store (Redis) unavailable: {reason}")
        self.reason = reason


class JobStore:
    """Atomic reads and writes of jobs in one Redis database (see the module docstring for keys)."""

    def __init__(self, client: redis.Redis, *, ttl_s: float, prefix: str = "suture") -> None:
        self._r = client
        self._ttl = max(1, int(ttl_s))
        self._p = prefix
        self._create = client.register_script(CREATE)
        self._save = client.register_script(SAVE_STATE)
        self._put_slice = client.register_script(PUT_SLICE)
        self._deliver = client.register_script(DELIVER)
        self._resume = client.register_script(RESUME)
        self._begin = client.register_script(BEGIN)
        self._lease = client.register_script(LEASE)
        self._open_task = client.register_script(OPEN_TASK)
        self._save_and_deliver = client.register_script(SAVE_AND_DELIVER)

    @property
    def prefix(self) -> str:
        """The key prefix (other Redis records of a job, e.g. a batch's accepted outputs, share it)."""
        return self._p

    @property
    def redis(self) -> redis.Redis:
        """The underlying client (for the rate limiter and the watchdog lock)."""
        return self._r

    def _job(self, job_id: str) -> str:
        return f"{self._p}:job:{job_id}"

    def _flags(self, job_id: str) -> str:
        return f"{self._p}:job:{job_id}:flags"

    def _slices(self, job_id: str, n: int) -> str:
        return f"{self._p}:job:{job_id}:slices:{n}"

    def _history(self, job_id: str) -> str:
        return f"{self._p}:job:{job_id}:history"

    def _done(self, job_id: str) -> str:
        return f"{self._p}:done:{job_id}"

    def _progress(self) -> str:
        return f"{self._p}:progress"

    def _deadlines(self) -> str:
        return f"{self._p}:deadlines"

    def create(
        self,
        job_id: str,
        spec: dict[str, Any],
        *,
        deadline_s: float,
        idempotency_key: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> tuple[str, bool]:
        """Store a new job (one round trip); with a known idempotency key, return that job instead.

        Returns ``(job_id, created)``; ``created`` is False when the key already named a job.
        """
        idem = f"{self._p}:idem:{idempotency_key}" if idempotency_key else self._job(job_id)
        args = [job_id, _dumps(spec), time.time(), deadline_s, self._ttl, _dumps(meta or {})]
        args.append("1" if idempotency_key else "0")
        found, created = self._call(self._create, [self._job(job_id), idem, self._deadlines()], args)
        return str(found), bool(created)

    def load(self, job_id: str) -> JobRecord:
        """The job as stored; raises JobNotFound."""
        raw = self._call_plain(lambda: self._r.hgetall(self._job(job_id)))
        if not raw or "spec" not in raw:
            raise JobNotFound(job_id)
        return JobRecord.from_hash(job_id, raw)

    def open_task(
        self, job_id: str, task_key: str, *, n: int = 0, pointer: str | None = None, slices: bool = False
    ) -> TaskOpening:
        """Count one more execution of a task and read its job, in one round trip; raises JobNotFound.

        With ``pointer``, also whether that slice reply of attempt ``n`` is stored (then the task is
        not counted); with ``slices``, every stored slice reply of attempt ``n``.
        """
        keys = [self._job(job_id), self._flags(job_id), self._slices(job_id, n), self._progress()]
        args = [task_key, self._ttl, pointer or "", "1" if slices else "0", time.time(), job_id]
        flat_job, count, stored, flat_slices = self._call(self._open_task, keys, args)
        raw = _pairs(flat_job)
        if "spec" not in raw:
            raise JobNotFound(job_id)
        replies = {p: json.loads(v) for p, v in _pairs(flat_slices).items()}
        return TaskOpening(JobRecord.from_hash(job_id, raw), int(count), bool(stored), replies)

    def status(self, job_id: str) -> str:
        """The job's status string; raises JobNotFound."""
        status = self._call_plain(lambda: self._r.hget(self._job(job_id), "status"))
        if status is None:
            raise JobNotFound(job_id)
        return str(status)

    def result(self, job_id: str) -> dict[str, Any] | None:
        """The delivered result, or None while the job runs; raises JobNotFound."""
        status, raw = self._call_plain(lambda: self._r.hmget(self._job(job_id), ["status", "result"]))
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
            self._call_plain(lambda: pubsub.subscribe(self._done(job_id)))
            while True:
                result = self.result(job_id)
                if result is not None:
                    return result
                remaining = 1.0 if deadline is None else deadline - time.monotonic()
                if remaining <= 0:
                    return None
                # Re-read at least every second: a resumed job publishes again on the same channel.
                wait_s = min(remaining, 1.0)
                self._call_plain(lambda: pubsub.get_message(timeout=wait_s))  # noqa: B023
        finally:
            pubsub.close()

    def history(self, job_id: str) -> list[dict[str, Any]]:
        """Results delivered before each resume, oldest first."""
        raw = self._call_plain(lambda: self._r.lrange(self._history(job_id), 0, -1))
        return [json.loads(item) for item in raw]

    def save_state(self, job_id: str, expected_version: int, state: dict[str, Any]) -> bool:
        """Compare-and-set: store ``state`` as version ``expected_version + 1``; False if it moved on."""
        args = [expected_version, expected_version + 1, _dumps(state)]
        outcome = int(self._call(self._save, [self._job(job_id)], args))
        if outcome == -1:
            raise JobNotFound(job_id)
        return outcome == 1

    def save_and_deliver(
        self, job_id: str, expected_version: int, state: dict[str, Any], result: dict[str, Any]
    ) -> bool:
        """``save_state`` and ``deliver`` in one atomic step (an attempt that ends its job); False if
        the version moved on or the job was already delivered."""
        keys = [self._job(job_id), self._deadlines(), self._done(job_id)]
        args = [expected_version, expected_version + 1, _dumps(state), _dumps(result), result["status"]]
        outcome = int(self._call(self._save_and_deliver, keys, [*args, job_id, self._ttl]))
        if outcome == -1:
            raise JobNotFound(job_id)
        return outcome == 1

    def put_slice(
        self, job_id: str, n: int, pointer: str, reply: dict[str, Any], expected: int
    ) -> SliceOutcome:
        """Store one slice reply of surgical attempt ``n`` once; claim the merge when all are in."""
        keys = [self._slices(job_id, n), self._flags(job_id)]
        added, count, claimed = self._call(
            self._put_slice, keys, [pointer, _dumps(reply), expected, n, self._ttl]
        )
        return SliceOutcome(stored=bool(added), count=int(count), merge_claimed=bool(claimed))

    def slices(self, job_id: str, n: int) -> dict[str, dict[str, Any]]:
        """Every stored slice reply of surgical attempt ``n``, by pointer."""
        raw = self._call_plain(lambda: self._r.hgetall(self._slices(job_id, n)))
        return {pointer: json.loads(value) for pointer, value in raw.items()}

    def deliver(self, job_id: str, result: dict[str, Any]) -> bool:
        """Store the final result once; True only for the call that stored it."""
        args = [_dumps(result), result["status"], job_id, self._ttl]
        keys = [self._job(job_id), self._deadlines(), self._done(job_id)]
        outcome = int(self._call(self._deliver, keys, args))
        if outcome == -1:
            raise JobNotFound(job_id)
        return outcome == 1

    def claim(self, job_id: str, flag: str) -> bool:
        """Set a once-flag of the job; True only for the first caller."""
        key = self._flags(job_id)
        pipe = self._r.pipeline(transaction=True)
        pipe.hsetnx(key, flag, 1)
        pipe.expire(key, self._ttl)
        return bool(self._call_plain(pipe.execute)[0])

    def lease(self, job_id: str, flag: str, owner: str, lease_s: float) -> bool:
        """Hold a re-takable once-flag: True unless it is done or another owner's lease still runs."""
        args = [flag, owner, time.time(), lease_s, self._ttl]
        return bool(self._call(self._lease, [self._flags(job_id)], args))

    def mark_done(self, job_id: str, flag: str) -> None:
        """Mark a leased flag done for good (no later lease is granted)."""
        self._call_plain(lambda: self._r.hset(self._flags(job_id), flag, "sent"))

    def put_action(self, job_id: str, n: int, action: dict[str, Any]) -> dict[str, Any]:
        """Store the action of attempt ``n`` once (first writer wins); returns the stored one."""
        key, field = self._job(job_id), f"action:{n}"
        pipe = self._r.pipeline(transaction=True)
        pipe.hsetnx(key, field, _dumps(action))
        pipe.hget(key, field)
        return dict(json.loads(self._call_plain(pipe.execute)[1]))

    def begin(self, job_id: str, task_key: str) -> int:
        """Count one more execution of a task (first is 1) and mark a queued job running."""
        return int(self._call(self._begin, [self._job(job_id), self._flags(job_id)], [task_key, self._ttl]))

    def overdue(self, now_s: float, limit: int = 500) -> list[str]:
        """Ids of undelivered jobs whose deadline has passed, oldest first."""
        ids = self._call_plain(lambda: self._r.zrangebyscore(self._deadlines(), "-inf", now_s, 0, limit))
        return [str(i) for i in ids]

    def forget_deadline(self, job_id: str) -> None:
        """Drop a job from the watchdog's list (it expired or was delivered)."""
        self._call_plain(lambda: self._r.zrem(self._deadlines(), job_id))

    def touch(self, job_id: str, now_s: float) -> None:
        """Mark that a job made progress now (the watchdog's stall clock restarts)."""
        self._call_plain(lambda: self._r.zadd(self._progress(), {job_id: now_s}))

    def stalled(self, before_s: float, limit: int = 500) -> list[str]:
        """Running jobs with no task opened since ``before_s`` (never opened: since they were created)."""
        running = [str(i) for i in self._call_plain(lambda: self._r.zrange(self._deadlines(), 0, limit - 1))]
        if not running:
            return []
        pipe = self._r.pipeline(transaction=False)
        pipe.zmscore(self._progress(), running)
        for job_id in running:
            pipe.hget(self._job(job_id), "created_s")
        # Entries of long-finished jobs would only grow the set; a running job is touched every stall.
        pipe.zremrangebyscore(self._progress(), "-inf", before_s - 86400)
        scores, *created, _ = self._call_plain(pipe.execute)
        last = [s if s is not None else float(c or 0) for s, c in zip(scores, created, strict=True)]
        return [job_id for job_id, at in zip(running, last, strict=True) if at < before_s]

    def resume(self, job_id: str, spec: dict[str, Any], state: dict[str, Any], deadline_s: float) -> bool:
        """Re-open a soft-delivered job with a new spec/state; False if it is not soft-delivered."""
        keys = [self._job(job_id), self._deadlines(), self._history(job_id)]
        args = [_dumps(spec), _dumps(state), deadline_s, job_id, self._ttl]
        outcome = int(self._call(self._resume, keys, args))
        if outcome == -1:
            raise JobNotFound(job_id)
        return outcome == 1

    def _call(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        return self._call_plain(lambda: script(keys=keys, args=args))

    @staticmethod
    def _call_plain(fn: Any) -> Any:
        try:
            return fn()
        except redis.exceptions.ConnectionError as exc:
            raise StoreUnavailable(type(exc).__name__ + ": " + _first_line(exc)) from None
        except redis.exceptions.ResponseError as exc:
            raise StoreUnavailable(_first_line(exc)) from None
        except redis.exceptions.AuthenticationError as exc:  # pragma: no cover - subclass of ConnectionError
            raise StoreUnavailable(_first_line(exc)) from None


def store_url(settings: Settings) -> str:
    """The store's Redis URL: SUTURE_REDIS_URL, else a redis:// broker URL, else the local default."""
    if settings.redis_url:
        return settings.redis_url
    if settings.broker_url and settings.broker_url.startswith(("redis://", "rediss://")):
        return settings.broker_url
    return "redis://127.0.0.1:6379/0"


def get_store(settings: Settings) -> JobStore:
    """The process-wide store for these settings' Redis URL (one connection pool per URL)."""
    return _store_for(store_url(settings), settings.worker.store_ttl_s)


@cache
def _store_for(url: str, ttl_s: float) -> JobStore:
    client = redis.Redis.from_url(url, decode_responses=True, health_check_interval=30)
    return JobStore(client, ttl_s=ttl_s)


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _pairs(flat: list[str]) -> dict[str, str]:
    """A Redis HGETALL reply returned through Lua (a flat key, value list) as a dict."""
    return dict(zip(flat[::2], flat[1::2], strict=True))


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]
