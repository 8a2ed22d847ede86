"""Which tenants' bulk jobs ran lately, per class: the counts that decide whose model calls go last.

Layout (``{p}`` is the store's key prefix)::

    {p}:load:<class>:tenants       sorted set: tenants, by when one of their jobs last sent a step
    {p}:load:<class>:t:<tenant>    sorted set: that tenant's job ids, by when each last sent a step

A job counts as running while it is unfinished (in ``{p}:deadlines``, which every ending leaves) and
sent a step within the last ``window_s``: the counts need no hook at a job's end, cannot drift, and
keys left idle expire. ``touch`` records a step; ``running`` reads the counts (one script per tenant
in one pipeline, dropping the ids of finished or idle jobs as it goes). Errors: ``StoreUnavailable``.
"""

from __future__ import annotations

import redis

from suture.workers.store.connection import as_text
from suture.workers.store.errors import guarded
from suture.workers.store.keys import Keys

# KEYS: a tenant's job ids by last step, the unfinished jobs (deadlines); ARGV: since_s.
# Returns how many of the tenant's jobs stepped since then and are unfinished; drops the others.
RUNNING = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
local n = 0
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if redis.call('ZSCORE', KEYS[2], id) then n = n + 1 else redis.call('ZREM', KEYS[1], id) end
end
return n
"""


class TenantLoad:
    """The running-jobs counts per tenant of one class, over a sliding window, in one Redis database."""

    def __init__(self, client: redis.Redis, prefix: str, window_s: float) -> None:
        self._r = client
        self._prefix = prefix
        self._deadlines = Keys(prefix).deadlines()
        self._running = client.register_script(RUNNING)
        self._window_s = window_s
        self._ttl_s = max(1, int(window_s * 2))

    def _tenants(self, job_class: str) -> str:
        return f"{self._prefix}:load:{job_class}:tenants"

    def _jobs(self, job_class: str, tenant: str) -> str:
        return f"{self._prefix}:load:{job_class}:t:{tenant}"

    def touch(self, job_class: str, tenant: str, job_id: str, now_s: float) -> None:
        """Note that ``job_id`` of ``tenant`` sent a step at ``now_s``."""
        pipe = self._r.pipeline(transaction=False)
        pipe.zadd(self._jobs(job_class, tenant), {job_id: now_s})
        pipe.expire(self._jobs(job_class, tenant), self._ttl_s)
        pipe.zadd(self._tenants(job_class), {tenant: now_s})
        pipe.expire(self._tenants(job_class), self._ttl_s)
        guarded(pipe.execute)

    def running(self, job_class: str, now_s: float) -> dict[str, int]:
        """Unfinished jobs per tenant of ``job_class`` that sent a step within the window (none: left out)."""
        since = now_s - self._window_s
        tenants_key = self._tenants(job_class)
        names = guarded(lambda: self._r.zrangebyscore(tenants_key, since, "+inf"))
        tenants = [as_text(name) for name in names]
        if not tenants:
            return {}
        pipe = self._r.pipeline(transaction=False)
        pipe.zremrangebyscore(tenants_key, "-inf", f"({since}")
        for tenant in tenants:
            self._running(keys=[self._jobs(job_class, tenant), self._deadlines], args=[since], client=pipe)
        counts = guarded(pipe.execute)[1:]
        return {tenant: int(count) for tenant, count in zip(tenants, counts, strict=True) if count}
