"""Outputs accepted earlier in a batch, kept in Redis so later jobs' retries can show one (example tier 2).

Only a fully valid delivery is kept: status ``delivered`` with no failures, never a soft-delivered,
refused or failed one (a rolled-back slice never reaches a delivered output). Each batch keeps a
bounded list, most recent first, of ``{"output", "repaired_kinds"}``: the failure kinds the job met
on its way, so a retry for a rule failure prefers an output that repaired the same kind.

Key (``{p}`` is the job store's prefix)::

    {p}:batch:<batch>:accepted   list of JSON, most recent first, trimmed to ``limit``, TTL of the store

Errors: Redis failures raise ``suture.workers.store.job_store.StoreUnavailable``.
"""

from __future__ import annotations

import json
from typing import Any

import redis

from suture.contracts.examples import AcceptedOutput
from suture.workers.errors import StoreUnavailable


def accepted_from(result: dict[str, Any]) -> AcceptedOutput | None:
    """The accepted output a job result gives its batch, or None if it is not fully valid."""
    if result.get("status") != "delivered" or result.get("failures") or result.get("output") is None:
        return None
    kinds = sorted({f["kind"] for a in result.get("attempts", []) for f in a.get("failures", [])})
    return AcceptedOutput(output=result["output"], repaired_kinds=kinds)


class AcceptedOutputs:
    """The per-batch lists of accepted outputs in one Redis database."""

    def __init__(self, client: redis.Redis, *, limit: int, ttl_s: float, prefix: str = "suture") -> None:
        self._r = client
        self._limit = limit
        self._ttl = max(1, int(ttl_s))
        self._p = prefix

    def _key(self, batch: str) -> str:
        return f"{self._p}:batch:{batch}:accepted"

    def add(self, batch: str, result: dict[str, Any]) -> bool:
        """Keep the result's output for its batch if it is fully valid; True if it was kept."""
        accepted = accepted_from(result)
        if accepted is None or self._limit <= 0:
            return False
        key = self._key(batch)
        pipe = self._r.pipeline(transaction=True)
        pipe.lpush(key, accepted.model_dump_json())
        pipe.ltrim(key, 0, self._limit - 1)
        pipe.expire(key, self._ttl)
        _run(pipe.execute)
        return True

    def recent(self, batch: str) -> list[AcceptedOutput]:
        """The batch's accepted outputs, oldest first (the order ``suture.tasks.engine.next_action``
        takes)."""
        if self._limit <= 0:
            return []
        raw = _run(lambda: self._r.lrange(self._key(batch), 0, self._limit - 1))
        return [AcceptedOutput.model_validate(json.loads(item)) for item in reversed(raw)]


def _run(fn: Any) -> Any:
    try:
        return fn()
    except redis.exceptions.RedisError as exc:
        raise StoreUnavailable(f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}") from None
