"""New jobs waiting for the dispatcher: a Redis list per (class, tenant), and the ids being dispatched.

Layout (``{p}`` is the store's key prefix)::

    {p}:waiting:<class>:t:<tenant>   list: ids of jobs not yet sent to a worker, newest at the head
    {p}:waiting:<class>:tenants      set: the tenants of <class> with a non-empty list ("" = no tenant)
    {p}:dispatching                  sorted set: ids taken off a list and not yet known published, by when
    {p}:dispatcher:lease             string: the dispatcher holding the lease (its owner id), with a TTL

``enqueue`` stores a job and pushes its id in one script (``CREATE`` with a waiting slot, so nothing is
lost between). ``take`` moves one id from a list to ``dispatching`` atomically, and only for the lease's
holder (a dispatcher that lost its lease takes nothing more); ``sent`` removes it once its message is
published. Ids left in ``dispatching`` belong to a dispatcher that died (or failed to publish) between
the two: ``stranded`` finds them for the next holder to send again. Errors: ``StoreUnavailable``.
"""

from __future__ import annotations

from dataclasses import dataclass

import redis

from suture.tasks.dispatch_order import PRIORITY_CLASSES, PriorityClass
from suture.workers.store.connection import as_text
from suture.workers.store.errors import guarded
from suture.workers.store.keys import Keys

# KEYS: lease; ARGV: owner, lease_ms. Returns 2 newly taken, 1 renewed, 0 another owner holds it.
LEASE = """
local holder = redis.call('GET', KEYS[1])
if not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 2
end
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""

# KEYS: lease, waiting list, tenants set, dispatching; ARGV: owner, now_s, tenant.
# Returns {0} lease not held, {1} nothing waits there, {2, id} id moved to dispatching.
TAKE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {0} end
local id = redis.call('RPOP', KEYS[2])
if redis.call('LLEN', KEYS[2]) == 0 then redis.call('SREM', KEYS[3], ARGV[3]) end
if not id then return {1} end
redis.call('ZADD', KEYS[4], ARGV[2], id)
return {2, id}
"""


@dataclass(frozen=True)
class WaitingSlot:
    """Where ``CREATE`` pushes a new job's id: its class's list for its tenant, and that class's tenant
    set."""

    list_key: str
    tenants_key: str
    tenant: str


class WaitingJobs:
    """The waiting lists, the dispatching record and the dispatcher's lease in one Redis database."""

    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self._r = client
        self._keys = keys
        self._prefix = keys.prefix
        self._lease = client.register_script(LEASE)
        self._take = client.register_script(TAKE)

    # -- key names ----------------------------------------------------------------------------
    def list_key(self, job_class: PriorityClass, tenant: str) -> str:
        return f"{self._prefix}:waiting:{job_class}:t:{tenant}"

    def tenants_key(self, job_class: PriorityClass) -> str:
        return f"{self._prefix}:waiting:{job_class}:tenants"

    def dispatching_key(self) -> str:
        return f"{self._prefix}:dispatching"

    def lease_key(self) -> str:
        return f"{self._prefix}:dispatcher:lease"

    def slot(self, job_class: PriorityClass, tenant: str | None) -> WaitingSlot:
        """Where a new job of ``job_class`` and ``tenant`` (None: the operator's) waits."""
        token = tenant or ""
        return WaitingSlot(self.list_key(job_class, token), self.tenants_key(job_class), token)

    # -- the dispatcher's side ------------------------------------------------------------------
    def hold_lease(self, owner: str, lease_s: float) -> int:
        """Take or renew the dispatcher's lease: 2 newly taken, 1 renewed, 0 another dispatcher holds it."""
        args: list[str | int] = [owner, max(1, int(lease_s * 1000))]
        return int(guarded(lambda: self._lease(keys=[self.lease_key()], args=args)))

    def tenants(self) -> dict[PriorityClass, list[str]]:
        """The tenants with jobs waiting, per class (sorted; "" is no tenant)."""
        pipe = self._r.pipeline(transaction=False)
        for job_class in PRIORITY_CLASSES:
            pipe.smembers(self.tenants_key(job_class))
        found = guarded(pipe.execute)
        return {
            c: sorted(as_text(t) for t in members) for c, members in zip(PRIORITY_CLASSES, found, strict=True)
        }

    def waits(self, job_class: PriorityClass) -> bool:
        """Whether any job of ``job_class`` waits (one cheap call, for an idle dispatcher to look often)."""
        return bool(guarded(lambda: self._r.exists(self.tenants_key(job_class))))

    def take(self, owner: str, job_class: PriorityClass, tenant: str, now_s: float) -> str | bool | None:
        """Move the oldest waiting job of (class, tenant) to ``dispatching``: its id, None if none
        waits there, False if ``owner`` no longer holds the lease (it must stop dispatching)."""
        keys = [self.lease_key(), self.list_key(job_class, tenant), self.tenants_key(job_class)]
        keys.append(self.dispatching_key())
        reply = guarded(lambda: self._take(keys=keys, args=[owner, now_s, tenant]))
        code = int(reply[0])
        return False if code == 0 else None if code == 1 else as_text(reply[1])

    def sent(self, job_id: str) -> None:
        """The job's first attempt is published: it leaves ``dispatching``."""
        guarded(lambda: self._r.zrem(self.dispatching_key(), job_id))

    def stranded(self, before_s: float, limit: int = 1000) -> list[str]:
        """Ids taken for dispatch before ``before_s`` and never marked sent (their dispatcher died, or its
        publish failed)."""
        found = guarded(lambda: self._r.zrangebyscore(self.dispatching_key(), "-inf", before_s, 0, limit))
        return [as_text(i) for i in found]

    def unopened(self, job_id: str) -> bool:
        """True if the job is queued and no task of it ever opened (its first attempt may never have gone
        out)."""
        pipe = self._r.pipeline(transaction=False)
        pipe.hget(self._keys.job(job_id), "status")
        pipe.zscore(self._keys.progress(), job_id)
        status, opened_s = guarded(pipe.execute)
        return status == "queued" and opened_s is None

    # -- reads ------------------------------------------------------------------------------------
    def counts(self) -> dict[PriorityClass, dict[str, int]]:
        """Jobs waiting per class and tenant."""
        tenants = self.tenants()
        pipe = self._r.pipeline(transaction=False)
        pairs = [(c, t) for c in PRIORITY_CLASSES for t in tenants[c]]
        for job_class, tenant in pairs:
            pipe.llen(self.list_key(job_class, tenant))
        lengths = guarded(pipe.execute) if pairs else []
        counts: dict[PriorityClass, dict[str, int]] = {c: {} for c in PRIORITY_CLASSES}
        for (job_class, tenant), length in zip(pairs, lengths, strict=True):
            counts[job_class][tenant] = int(length)
        return counts

    def oldest_created(self) -> dict[PriorityClass, float | None]:
        """When the oldest job still waiting in each class was created (epoch seconds; None: none waits)."""
        tenants = self.tenants()
        pairs = [(c, t) for c in PRIORITY_CLASSES for t in tenants[c]]
        pipe = self._r.pipeline(transaction=False)
        for job_class, tenant in pairs:
            pipe.lindex(self.list_key(job_class, tenant), -1)  # pushed left, taken right: the oldest
        heads = guarded(pipe.execute) if pairs else []
        pipe = self._r.pipeline(transaction=False)
        for head in heads:
            pipe.hget(self._keys.job(as_text(head)) if head else self._keys.job("-"), "created_s")
        created = guarded(pipe.execute) if heads else []
        oldest: dict[PriorityClass, float | None] = dict.fromkeys(PRIORITY_CLASSES)
        for (job_class, _tenant), at in zip(pairs, created, strict=True):
            if at is not None:
                current = oldest[job_class]
                oldest[job_class] = float(at) if current is None else min(current, float(at))
        return oldest

    def sent_unfinished(self, counts: dict[PriorityClass, dict[str, int]] | None = None) -> int:
        """Jobs sent to the workers and not finished yet: the unfinished jobs less those still waiting
        (``counts``: the waiting counts just read, if the caller has them)."""
        pipe = self._r.pipeline(transaction=False)
        pipe.zcard(self._keys.deadlines())
        pipe.zcard(self.dispatching_key())
        unfinished, dispatching = guarded(pipe.execute)
        waiting = sum(sum(per.values()) for per in (counts or self.counts()).values())
        return max(0, int(unfinished) - int(dispatching) - waiting)

    def total(self) -> int:
        """Jobs not yet handed to the broker: waiting in a list, or being dispatched."""
        waiting = sum(sum(per.values()) for per in self.counts().values())
        return waiting + int(guarded(lambda: self._r.zcard(self.dispatching_key())))
