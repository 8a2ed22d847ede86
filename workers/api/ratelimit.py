"""A per-key request limit shared by every API process through Redis: a counter per key and minute.

``api.rate_limit_per_minute`` requests per key in each clock minute (0: no limit). Over it, 429 with
``Retry-After``: the seconds until the next minute starts. Fixed windows let a caller send up to twice
the rate across a minute's boundary, a price paid for one Redis round trip per request.
"""

from __future__ import annotations

import math
import time

import redis

from suture.workers.api.problems import ProblemError
from suture.workers.store.errors import guarded


class RequestLimiter:
    """Counts requests per key id and minute in Redis; ``check`` raises a 429 problem over the limit."""

    def __init__(self, client: redis.Redis, per_minute: int, *, prefix: str = "suture:api:rate") -> None:
        self._r = client
        self._limit = per_minute
        self._prefix = prefix

    @property
    def enabled(self) -> bool:
        return self._limit > 0

    def check(self, key_id: str, now_s: float | None = None) -> None:
        """Count one request of ``key_id``; raise ProblemError(429) if it is over this minute's limit."""
        if not self.enabled:
            return
        now = time.time() if now_s is None else now_s
        minute = int(now // 60)
        key = f"{self._prefix}:{key_id}:{minute}"
        pipe = self._r.pipeline(transaction=False)
        pipe.incr(key)
        pipe.expire(key, 120)
        count = int(guarded(pipe.execute)[0])
        if count > self._limit:
            retry_s = max(1, math.ceil((minute + 1) * 60 - now))
            raise ProblemError(
                429,
                "rate-limited",
                f"more than {self._limit} requests this minute (api.rate_limit_per_minute); retry in "
                f"{retry_s} s",
                headers={"Retry-After": str(retry_s)},
            )
