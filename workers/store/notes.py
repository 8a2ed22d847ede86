"""What the store notes about a job after the fact: once-flags for alerts, and attempts that came back late.

``JobStore.notes``. A once-flag (``claim_once``) lets one alert go out per job and kind however many
tasks notice the same thing (a lost worker's slices). Late attempts: the watchdog ends a job at its deadline
while an attempt may still be running on a model worker; that
attempt cost tokens and money. When it finishes, its record is appended to the stored result with
``"late": true`` and the result's totals (usage, cost, latency) grow by it, so a failed job counts
every attempt it made. One optimistic transaction (WATCH the job hash); at most one late record per
attempt number.
"""

from __future__ import annotations

import json
from typing import Any

import redis

from suture.workers.store.errors import guarded
from suture.workers.store.keys import Keys

MAX_TRIES = 5
USAGE_KEYS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens")


class JobNotes:
    """Once-flags and late attempts of the jobs in one Redis database."""

    def __init__(self, client: redis.Redis, keys: Keys, ttl_s: int) -> None:
        self._r = client
        self._keys = keys
        self._ttl = ttl_s

    def claim_once(self, job_id: str, flag: str) -> bool:
        """Take a once-flag of the job (e.g. one alert per job); True only for the first caller."""
        pipe = self._r.pipeline(transaction=True)
        pipe.hsetnx(self._keys.flags(job_id), flag, "1")
        pipe.expire(self._keys.flags(job_id), self._ttl)
        return bool(guarded(pipe.execute)[0])

    def claim_gone_warning(self, job_id: str) -> bool:
        """Take the one warning that job ``job_id`` is gone from the store; True only for the first caller.

        A key of its own, not the job's flags: those went with the job, and must not seem to bring it back.
        """
        claimed = guarded(lambda: self._r.set(self._keys.gone(job_id), "1", nx=True, ex=self._ttl))
        return bool(claimed)

    def add_late_attempt(self, job_id: str, attempt: dict[str, Any]) -> bool:
        """Append ``attempt`` (result-schema form) to the job's stored result, totals too, once.

        True if it was added; False if the job has no result (nothing to amend) or already lists it.
        """
        return bool(guarded(lambda: _amend(self._r, self._keys.job(job_id), attempt)))


def _amend(client: redis.Redis, job_key: str, attempt: dict[str, Any]) -> bool:
    for _ in range(MAX_TRIES):
        with client.pipeline(transaction=True) as pipe:
            try:
                pipe.watch(job_key)
                raw = pipe.hget(job_key, "result")
                if not raw:
                    return False
                result = json.loads(raw)
                if not amended(result, attempt):
                    return False
                pipe.multi()
                pipe.hset(job_key, "result", json.dumps(result, separators=(",", ":"), ensure_ascii=False))
                pipe.execute()
                return True
            except redis.exceptions.WatchError:  # the result changed meanwhile (a resume): read it again
                continue
    return False


def amended(result: dict[str, Any], attempt: dict[str, Any]) -> bool:
    """Add ``attempt`` to ``result`` in place (False if an attempt with its number is already late there)."""
    attempts = result.setdefault("attempts", [])
    if any(a.get("late") and a.get("n") == attempt.get("n") for a in attempts if isinstance(a, dict)):
        return False
    attempts.append({**attempt, "late": True})
    usage = result.setdefault("usage", {})
    added = attempt.get("usage") or {}
    for key in USAGE_KEYS:
        usage[key] = int(usage.get(key) or 0) + int(added.get(key) or 0)
    cost, more = result.get("cost_usd"), attempt.get("cost_usd")
    # An unknown price makes the total unknown, as for attempts applied in time.
    result["cost_usd"] = None if cost is None or more is None else round(cost + more, 8)
    result["latency_ms"] = round(
        float(result.get("latency_ms") or 0) + float(attempt.get("latency_ms") or 0), 3
    )
    return True
