"""Per-model request-rate limits (requests/min) shared by every worker through Redis.

Celery's own ``rate_limit`` is per worker process, so N workers would send N times the allowed
rate. Here each call reserves the next free slot of its model in Redis (one Lua script, using
Redis' clock so worker clocks need not agree) and sleeps until that slot: calls are spaced
``60 / rpm`` seconds apart across the whole cluster, with a small burst allowance.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

import redis

# Returns the milliseconds the caller must wait before its slot.
_RESERVE = """
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval_ms = tonumber(ARGV[1])
local burst_ms = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local start = math.max(tat, now_ms - burst_ms)
redis.call('SET', KEYS[1], start + interval_ms, 'PX', math.max(burst_ms, 1000) + interval_ms * 2 + (start - now_ms))
return math.max(0, start - now_ms)
"""


class RateLimiter:
    """Spaces calls per model to ``rates_rpm[model]`` requests/min across all processes."""

    def __init__(
        self,
        client: redis.Redis,
        rates_rpm: Mapping[str, int],
        *,
        burst: int = 1,
        prefix: str = "suture:ratelimit",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._rates = {model: rpm for model, rpm in rates_rpm.items() if rpm > 0}
        self._burst = max(0, burst)
        self._prefix = prefix
        self._sleep = sleep
        self._reserve = client.register_script(_RESERVE)

    def limited(self, model: str) -> bool:
        """True if this model has a configured limit."""
        return model in self._rates

    def acquire(self, model: str) -> float:
        """Wait for this model's next slot; returns the seconds waited (0 for unlimited models)."""
        rpm = self._rates.get(model)
        if rpm is None:
            return 0.0
        interval_ms = 60_000.0 / rpm
        burst_ms = int(interval_ms * self._burst)
        wait_ms = int(self._reserve(keys=[f"{self._prefix}:{model}"], args=[int(interval_ms), burst_ms]))
        wait_s = wait_ms / 1000.0
        if wait_s > 0:
            self._sleep(wait_s)
        return wait_s
