"""The watchdog's view of the job store: running jobs by deadline, when each last made progress, live workers.

Two sorted sets the store's scripts keep up to date (a job joins ``deadlines`` when created or
resumed and leaves it when delivered; every task opening scores it in ``progress``); the watchdog
reads them to end jobs past their deadline and to re-send the next step of jobs that stalled. A
third, ``workers``, holds when each worker's watchdog clock last beat (at start, then every
interval), so ``suture status`` can say that nothing consumes a queued job; beside it a hash,
``workers:slots``, holds how many model-call slots each worker has for bulk calls, so the
dispatcher knows how many bulk jobs keep the live workers busy (``model_slots``), and another,
``workers:in_hand``, the jobs whose tasks each worker holds (running, prefetched, or waiting for a countdown),
so the watchdog can tell a job with nothing in flight (its message lost) from one whose task runs long
(``idle`` and ``in_hand``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import redis

from suture.workers.store.connection import as_text
from suture.workers.store.errors import guarded
from suture.workers.store.keys import Keys

# Progress entries older than this behind the stall horizon belong to long-finished jobs.
PROGRESS_KEPT_S = 86400
# A worker silent for this many watchdog intervals is taken for gone (the default: 2 minutes).
WORKER_SILENT_BEATS = 4
# The n-th nudge of a job waits stall_s x 2^(n-1) without progress; beyond this the wait stops growing.
MAX_NUDGE_DOUBLINGS = 5

# Count nudge n of a job and restart its stall clock so that nudge n + 1 comes after stall_s x 2^n (atomic).
# KEYS: job hash, progress set; ARGV: now_s, stall_s, job id, max doublings. Returns the nudge count
# (0: the job is gone; nothing is written, so an expired job leaves no stray key behind).
NUDGED = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local n = redis.call('HINCRBY', KEYS[1], 'nudges', 1)
local doublings = math.min(n, tonumber(ARGV[4]))
redis.call('ZADD', KEYS[2], tonumber(ARGV[1]) + tonumber(ARGV[2]) * (2 ^ doublings - 1), ARGV[3])
return n
"""


class Watchlist:
    """Reads and marks of the running jobs' deadlines and progress times, for the watchdog."""

    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self._r = client
        self._keys = keys
        self._nudged = client.register_script(NUDGED)

    def overdue(self, now_s: float, limit: int = 500) -> list[str]:
        """Ids of undelivered jobs whose deadline has passed, oldest first."""
        deadlines = self._keys.deadlines()
        ids = guarded(lambda: self._r.zrangebyscore(deadlines, "-inf", now_s, 0, limit))
        return [str(i) for i in ids]

    def counts(self, now_s: float) -> dict[str, int]:
        """How many jobs are on the deadlines list, and how many of them are past their deadline.

        The list holds the unfinished jobs, and for a moment a cancelled job whose callback has not
        gone out yet (``suture.workers.flow.delivery.cancel``): it counts as unfinished until that delivery
        ran.
        """
        pipe = self._r.pipeline(transaction=False)
        pipe.zcard(self._keys.deadlines())
        pipe.zcount(self._keys.deadlines(), "-inf", now_s)
        unfinished, overdue = guarded(pipe.execute)
        return {"unfinished": int(unfinished), "past_deadline": int(overdue)}

    def forget(self, job_id: str) -> None:
        """Drop a job from the deadlines (it expired or was delivered)."""
        guarded(lambda: self._r.zrem(self._keys.deadlines(), job_id))

    def touch(self, job_id: str, now_s: float) -> None:
        """Mark that a job made progress now (the watchdog's stall clock restarts)."""
        guarded(lambda: self._r.zadd(self._keys.progress(), {job_id: now_s}))

    def nudged(self, job_id: str, now_s: float, stall_s: float) -> int:
        """Count a nudge of the job and back off its next one: the n-th waits ``stall_s`` x 2^(n-1).

        Returns how many times the job was nudged (0 if it is gone).
        """
        keys = [self._keys.job(job_id), self._keys.progress()]
        args: list[str | float] = [now_s, stall_s, job_id, MAX_NUDGE_DOUBLINGS]
        return int(guarded(lambda: self._nudged(keys=keys, args=args)))

    def idle(self, before_s: float, limit: int = 500) -> list[str]:
        """Running jobs whose last task opened before ``before_s``, never nudged yet.

        Not listed: a job no task ever opened (one waiting for the dispatcher is no lost message), and a
        job already nudged (its next nudges back off from ``stall_s``: ``nudged``).
        """
        running, scores, nudges = self._running_with("nudges", limit)
        return [
            job_id
            for job_id, at, nudged in zip(running, scores, nudges, strict=True)
            if at is not None and at < before_s and not int(nudged or 0)
        ]

    def in_hand(self, now_s: float, silent_s: float) -> set[str]:
        """The jobs whose tasks the workers that beat within ``silent_s`` held at their last beat."""
        pipe = self._r.pipeline(transaction=False)
        pipe.zrangebyscore(self._keys.workers(), now_s - silent_s, "+inf")
        pipe.hgetall(self._keys.workers_in_hand())
        live, held = guarded(pipe.execute)
        live_owners = {as_text(owner) for owner in live}
        by_owner = {as_text(owner): json.loads(as_text(jobs)) for owner, jobs in held.items()}
        gone = [owner for owner in by_owner if owner not in live_owners]
        if gone:  # a worker that comes back writes its jobs again at its next beat
            guarded(lambda: self._r.hdel(self._keys.workers_in_hand(), *gone))
        return {str(job_id) for owner, jobs in by_owner.items() if owner in live_owners for job_id in jobs}

    def stalled(self, before_s: float, limit: int = 500) -> list[str]:
        """Running jobs with no task opened since ``before_s`` (never opened: since they were created)."""
        # Entries of long-finished jobs would only grow the set; a running job is touched every stall.
        running, scores, created = self._running_with(
            "created_s", limit, trim_before_s=before_s - PROGRESS_KEPT_S
        )
        last = [s if s is not None else float(c or 0) for s, c in zip(scores, created, strict=True)]
        return [job_id for job_id, at in zip(running, last, strict=True) if at < before_s]

    def beat(self, owner: str, now_s: float, model_slots: int = 0, in_hand: Iterable[str] = ()) -> None:
        """Record that worker ``owner`` is alive now, with its slots for bulk model calls and the jobs whose
        tasks it holds; workers silent for a day are forgotten."""
        pipe = self._r.pipeline(transaction=False)
        pipe.zadd(self._keys.workers(), {owner: now_s})
        pipe.zremrangebyscore(self._keys.workers(), "-inf", now_s - PROGRESS_KEPT_S)
        pipe.hset(self._keys.worker_slots(), owner, max(0, int(model_slots)))
        pipe.hset(self._keys.workers_in_hand(), owner, json.dumps(sorted(set(in_hand))))
        guarded(pipe.execute)

    def model_slots(self, now_s: float, silent_s: float) -> int:
        """The bulk model-call slots of the workers that beat within ``silent_s`` (the others' are
        dropped)."""
        pipe = self._r.pipeline(transaction=False)
        pipe.zrangebyscore(self._keys.workers(), now_s - silent_s, "+inf")
        pipe.hgetall(self._keys.worker_slots())
        live, slots = guarded(pipe.execute)
        live_owners = {as_text(owner) for owner in live}
        by_owner = {as_text(owner): int(n) for owner, n in slots.items()}
        gone = [owner for owner in by_owner if owner not in live_owners]
        if gone:  # a worker that comes back writes its slots again at its next beat
            guarded(lambda: self._r.hdel(self._keys.worker_slots(), *gone))
        return sum(n for owner, n in by_owner.items() if owner in live_owners)

    def live_workers(self, now_s: float, silent_s: float) -> int:
        """How many workers beat within the last ``silent_s``."""
        return int(guarded(lambda: self._r.zcount(self._keys.workers(), now_s - silent_s, "+inf")))

    def last_worker_seen(self) -> float | None:
        """When any worker last beat (epoch seconds), or None if none has in the last day."""
        latest = guarded(lambda: self._r.zrevrange(self._keys.workers(), 0, 0, withscores=True))
        return float(latest[0][1]) if latest else None

    def _running_with(
        self, field: str, limit: int, *, trim_before_s: float | None = None
    ) -> tuple[list[str], list[Any], list[Any]]:
        """Up to ``limit`` running jobs, the time their last task opened (None: never) and one field of each.

        With ``trim_before_s``, progress entries older than it are dropped in the same round trip.
        """
        running = [str(i) for i in guarded(lambda: self._r.zrange(self._keys.deadlines(), 0, limit - 1))]
        if not running:
            return [], [], []
        pipe = self._r.pipeline(transaction=False)
        pipe.zmscore(self._keys.progress(), running)
        for job_id in running:
            pipe.hget(self._keys.job(job_id), field)
        if trim_before_s is not None:
            pipe.zremrangebyscore(self._keys.progress(), "-inf", trim_before_s)
        replies = guarded(pipe.execute)
        return running, replies[0], replies[1 : 1 + len(running)]
