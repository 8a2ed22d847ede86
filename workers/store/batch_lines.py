"""Batch API lines and rounds in the job store: what waits, what was submitted, what came back.

Every write that must happen once is one atomic Lua script (``batch_scripts``), so a step or round
task run twice (redelivered, or re-sent by the watchdog) records nothing twice. Layout (``{p}`` is
the store's prefix)::

    {p}:batchapi:pending:<model>   hash: custom_id -> line entry JSON (job, n, pointer, request line)
    {p}:batchapi:since             hash: model -> when its oldest waiting line came in (s)
    {p}:batchapi:where             hash: custom_id -> "pending" | the round it went into
    {p}:batchapi:reply:<custom_id> string: the reply JSON (a ``ModelReply``), kept store_ttl_s
    {p}:batchapi:awaiting          sorted set: job ids with a line waiting or in a round, by since
    {p}:batchapi:rounds            set: round ids not yet done
    {p}:batchapi:round:<r>         hash: model, status (claimed | submitted | collected | done),
                                   batch_id, created_s, next_poll_s, lines, polls
    {p}:batchapi:round:<r>:lines   hash: custom_id -> line entry JSON (the pending hash, renamed)
    {p}:batchapi:lease:<r>         string: a round task is on its way or running (expires: lease_s)
    {p}:batchapi:submit:<r>        string: a round task is submitting its batch (expires: lease_s)

Errors are the store's (``StoreUnavailable``).
"""

from __future__ import annotations

import json
from typing import Any

import redis

from suture.workers.store.batch_scripts import ADD_LINE, CLAIM, CLOSE
from suture.workers.store.errors import guarded

ADDED, WAITING, ANSWERED = 1, 0, 2
Arg = str | int | float  # what a script argument or hash field may be


class BatchLines:
    """The Batch API state under one key prefix; replies and rounds kept ``ttl_s``."""

    def __init__(self, client: redis.Redis, *, prefix: str, ttl_s: float) -> None:
        self.redis = client
        self._p = f"{prefix}:batchapi"
        self._progress = f"{prefix}:progress"
        self._ttl = max(1, int(ttl_s))
        self._add = client.register_script(ADD_LINE)
        self._claim = client.register_script(CLAIM)
        self._close = client.register_script(CLOSE)

    def __repr__(self) -> str:
        return f"BatchLines(prefix={self._p!r})"

    # -- lines -------------------------------------------------------------------------------
    def add(self, model: str, custom_id: str, entry: dict[str, Any], job_id: str, now_s: float) -> int:
        """Record a line as waiting for ``model``'s next round: ADDED, WAITING (already) or ANSWERED."""
        keys = [self._where(), self._pending(model), self._since(), self._reply(custom_id), self._awaiting()]
        args: list[Arg] = [custom_id, json.dumps(entry, separators=(",", ":")), model, now_s, job_id]
        return int(guarded(lambda: self._add(keys=keys, args=args)))

    def reply(self, custom_id: str) -> dict[str, Any] | None:
        """The stored reply of a line (None: none yet)."""
        raw = guarded(lambda: self.redis.get(self._reply(custom_id)))
        return json.loads(raw) if raw else None

    def put_replies(self, replies: dict[str, dict[str, Any]]) -> None:
        """Store each line's reply once (a reply already stored stays)."""
        pipe = self.redis.pipeline(transaction=False)
        for custom_id, reply in replies.items():
            pipe.set(self._reply(custom_id), json.dumps(reply, separators=(",", ":")), nx=True, ex=self._ttl)
        guarded(pipe.execute)

    # -- waiting lines ------------------------------------------------------------------------
    def waiting(self) -> dict[str, tuple[float, int]]:
        """Models with lines waiting: model -> (since_s, how many)."""
        since = guarded(lambda: self.redis.hgetall(self._since()))
        models = list(since)
        if not models:
            return {}
        pipe = self.redis.pipeline(transaction=False)
        for model in models:
            pipe.hlen(self._pending(model))
        counts = guarded(pipe.execute)
        return {m: (float(since[m]), int(c)) for m, c in zip(models, counts, strict=True)}

    def claim(self, model: str, round_id: str, now_s: float, max_lines: int) -> int:
        """Move up to ``max_lines`` waiting lines of ``model`` into a new round; how many moved."""
        keys = [self._pending(model), self._lines(round_id), self._round(round_id), self._rounds()]
        keys += [self._since(), self._where()]
        args: list[Arg] = [round_id, model, now_s, max_lines, self._ttl]
        return int(guarded(lambda: self._claim(keys=keys, args=args)))

    def touch_awaiting(self, now_s: float) -> int:
        """Mark the jobs waiting for a batch as making progress (the watchdog does not nudge them)."""
        jobs = guarded(lambda: self.redis.zrange(self._awaiting(), 0, -1))
        if jobs:
            guarded(lambda: self.redis.zadd(self._progress, dict.fromkeys(jobs, now_s)))
        return len(jobs)

    # -- rounds --------------------------------------------------------------------------------
    def open_rounds(self) -> list[str]:
        """Rounds not yet done."""
        return sorted(str(r) for r in guarded(lambda: self.redis.smembers(self._rounds())))

    def round(self, round_id: str) -> dict[str, str]:
        """A round's fields (empty: no such round)."""
        return dict(guarded(lambda: self.redis.hgetall(self._round(round_id))))

    def lines(self, round_id: str) -> dict[str, dict[str, Any]]:
        """A round's lines: custom_id -> entry."""
        raw = guarded(lambda: self.redis.hgetall(self._lines(round_id)))
        return {custom_id: json.loads(entry) for custom_id, entry in raw.items()}

    def update(self, round_id: str, **fields: Arg) -> None:
        """Set fields of a round (status, batch_id, next_poll_s, ...)."""
        mapping: dict[Any, Any] = dict(fields)
        guarded(lambda: self.redis.hset(self._round(round_id), mapping=mapping))

    def count_poll(self, round_id: str) -> int:
        """Count one poll of a round's batch; how many so far."""
        return int(guarded(lambda: self.redis.hincrby(self._round(round_id), "polls", 1)))

    def count_failure(self, round_id: str) -> int:
        """Count one failed submission of a round; how many so far."""
        return int(guarded(lambda: self.redis.hincrby(self._round(round_id), "failures", 1)))

    def take_lease(self, round_id: str, lease_s: float) -> bool:
        """True if no round task holds ``round_id``'s lease; it is held for ``lease_s`` from now."""
        key = self._lease(round_id)
        return bool(guarded(lambda: self.redis.set(key, "1", nx=True, px=max(1, int(lease_s * 1000)))))

    def release_lease(self, round_id: str) -> None:
        """The round task is done for now: the next sweep may send it again when it is due."""
        guarded(lambda: self.redis.delete(self._lease(round_id)))

    def lock_submit(self, round_id: str, lease_s: float) -> bool:
        """True if this task may submit the round's batch (no other one is doing it)."""
        key = self._submit(round_id)
        return bool(guarded(lambda: self.redis.set(key, "1", nx=True, px=max(1, int(lease_s * 1000)))))

    def unlock_submit(self, round_id: str) -> None:
        """The submission failed: the next round task may try (it looks for the batch first)."""
        guarded(lambda: self.redis.delete(self._submit(round_id)))

    def close(self, round_id: str, job_ids: list[str]) -> None:
        """The round is done: its lines' jobs were sent on; forget where its lines were."""
        keys = [self._round(round_id), self._rounds(), self._where(), self._lines(round_id)]
        keys += [self._awaiting(), self._lease(round_id)]
        args = [round_id, json.dumps(job_ids)]
        guarded(lambda: self._close(keys=keys, args=args))

    # -- key names ------------------------------------------------------------------------------
    def _pending(self, model: str) -> str:
        return f"{self._p}:pending:{model}"

    def _since(self) -> str:
        return f"{self._p}:since"

    def _where(self) -> str:
        return f"{self._p}:where"

    def _reply(self, custom_id: str) -> str:
        return f"{self._p}:reply:{custom_id}"

    def _awaiting(self) -> str:
        return f"{self._p}:awaiting"

    def _rounds(self) -> str:
        return f"{self._p}:rounds"

    def _round(self, round_id: str) -> str:
        return f"{self._p}:round:{round_id}"

    def _lines(self, round_id: str) -> str:
        return f"{self._p}:round:{round_id}:lines"

    def _lease(self, round_id: str) -> str:
        return f"{self._p}:lease:{round_id}"

    def _submit(self, round_id: str) -> str:
        return f"{self._p}:submit:{round_id}"
