"""The callback outbox: each callback a job owes, until it was delivered or given up (at least once).

A job's delivery adds its callback once per round (``add``) and publishes ``suture.callback``; the
worker that takes the message claims it (``claim``), delivers it and records the outcome
(``finish``): sent, given up, or due again after a backoff. Nothing is lost to a dead worker or a
lost message: every pending callback sits in one sorted set, scored by the time it needs attention
(its message's pick-up lease, its delivery lease, or its next retry), and the watchdog publishes
the ones past due again (``due``, then ``ready``). Layout (drawn with the rest in ``job_store``)::

    {p}:callbacks           sorted set: "<job id>|<tag>" scored by when the watchdog looks at it again
    {p}:workers:webhook     the workers' callback target rules (``announce``), refreshed at each heartbeat
    {p}:job:<id>:flags      field callback:<tag> = "<attempts>|ready|sending|waiting", "sent", "failed"
                            field callback-last:<tag> = the last attempt's outcome (JSON: attempts,
                            last_status, last_error; never a body), for the job's status (``delivery``)

``tag`` is the job's round ("0", "1" after a resume) or "<round>-reviewed" for a reviewer's accept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

import redis

from suture.workers.store.durability import Durability, ReplicaAck
from suture.workers.store.errors import guarded
from suture.workers.store.keys import Keys

# KEYS: flags, callbacks; ARGV: field, member, score, ttl_s. Returns 1 if added now, 2 if it was there
# but no delivery has claimed it yet (its message may not have gone out), 0 otherwise.
ADD = """
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v == '0|ready' then return 2 end
if v then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], '0|ready')
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
return 1
"""

# A delivery may start if its message is the one published for it (ready) or its lease ran out.
# KEYS: flags, callbacks; ARGV: field, member, now_s, lease_until_s. Returns the attempts made so far,
# -1 if there is nothing to deliver (sent, given up, unknown), -2 if someone else is delivering it.
CLAIM = """
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then redis.call('ZREM', KEYS[2], ARGV[2]) return -1 end
local attempts, phase = string.match(v, '^(%d+)|(%a+)$')
if not attempts then return -1 end
local score = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[2]) or '0')
if phase ~= 'ready' and score > tonumber(ARGV[3]) then return -2 end
redis.call('HSET', KEYS[1], ARGV[1], attempts .. '|sending')
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[2])
return tonumber(attempts)
"""

# KEYS: flags, callbacks; ARGV: field, member, final ('sent', 'failed' or '' to retry), retry_at_s,
# the last attempt's field and outcome (JSON).
FINISH = """
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return 0 end
local attempts = string.match(v, '^(%d+)|')
if not attempts then return 0 end
redis.call('HSET', KEYS[1], ARGV[5], ARGV[6])
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  redis.call('ZREM', KEYS[2], ARGV[2])
else
  redis.call('HSET', KEYS[1], ARGV[1], (tonumber(attempts) + 1) .. '|waiting')
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[2])
end
return 1
"""

# The watchdog found the member past due: a new message goes out for it. KEYS: flags, callbacks;
# ARGV: field, member, now_s, pick-up lease until. Returns 1 to publish, 0 if not due (or gone).
READY = """
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then redis.call('ZREM', KEYS[2], ARGV[2]) return 0 end
local attempts = string.match(v, '^(%d+)|')
if not attempts then redis.call('ZREM', KEYS[2], ARGV[2]) return 0 end
if tonumber(redis.call('ZSCORE', KEYS[2], ARGV[2]) or '0') > tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], attempts .. '|ready')
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[2])
return 1
"""


DeliveryState = Literal["pending", "delivered", "failed"]


@dataclass(frozen=True)
class LastAttempt:
    """How a callback's latest delivery went: attempts so far, the HTTP status (None: none came), the
    error."""

    attempts: int
    status: int | None = None
    error: str | None = None

    def dumps(self) -> str:
        return json.dumps({"attempts": self.attempts, "last_status": self.status, "last_error": self.error})


@dataclass(frozen=True)
class Pending:
    """One callback the outbox holds: the job and which of its results (round, or review)."""

    job_id: str
    tag: str

    @property
    def member(self) -> str:
        return f"{self.job_id}|{self.tag}"

    @property
    def field(self) -> str:
        return f"callback:{self.tag}"

    @property
    def last_field(self) -> str:
        return f"callback-last:{self.tag}"

    @classmethod
    def parse(cls, member: str) -> Pending:
        job_id, _, tag = member.partition("|")
        return cls(job_id, tag)


class Outbox:
    """The callbacks owed, in one Redis database under the key names of ``keys``."""

    def __init__(
        self, client: redis.Redis, keys: Keys, *, ttl_s: int, replica_ack: ReplicaAck | None = None
    ) -> None:
        self._r = client
        # The callback owed and its claim are acknowledged by a replica before the POST follows them
        # (``suture.workers.store.durability``): no webhook goes out on the word of a primary on its way out.
        self._replica_ack = replica_ack or ReplicaAck(client, Durability())
        self._keys = keys
        self._ttl = ttl_s
        self._add = client.register_script(ADD)
        self._claim = client.register_script(CLAIM)
        self._finish = client.register_script(FINISH)
        self._ready = client.register_script(READY)

    def add(self, item: Pending, pickup_until_s: float) -> int:
        """Owe this callback (once): 1 if added now, 2 if owed but not yet claimed by a delivery, else 0.

        With 1 or 2 the caller publishes its message (again, for 2: a step re-run after an outage
        cannot know whether its first publish went out; a second message finds it claimed).
        """
        args = [item.field, item.member, pickup_until_s, self._ttl]
        return int(self._acked(self._add, item, args, f"job {item.job_id}'s callback"))

    def claim(self, item: Pending, now_s: float, lease_until_s: float) -> int | None:
        """Start delivering: the attempts made so far, or None if it is done or held by another."""
        args = [item.field, item.member, now_s, lease_until_s]
        attempts = int(self._acked(self._claim, item, args, f"job {item.job_id}'s callback claim"))
        return attempts if attempts >= 0 else None

    def sent(self, item: Pending, last: LastAttempt) -> None:
        """Delivered: the receiver answered 2xx."""
        self._finish_with(item, "sent", 0, last)

    def give_up(self, item: Pending, last: LastAttempt) -> None:
        """Not delivered, and never will be (attempts ran out, or the target is refused)."""
        self._finish_with(item, "failed", 0, last)

    def retry_at(self, item: Pending, when_s: float, last: LastAttempt) -> None:
        """Not delivered this time: one more attempt counted, due again at ``when_s``."""
        self._finish_with(item, "", when_s, last)

    def _finish_with(self, item: Pending, final: str, when_s: float, last: LastAttempt) -> None:
        args = [item.field, item.member, final, when_s, item.last_field, last.dumps()]
        self._call(self._finish, item, args)

    def delivery(self, job_id: str) -> dict[str, Any] | None:
        """The delivery state of the job's latest callback (``delivery_of``); None if it owes none."""
        return delivery_of(guarded(lambda: self._r.hgetall(self._keys.flags(job_id))))

    def announce(self, rules: dict[str, Any], ttl_s: float) -> None:
        """Say which callbacks the workers deliver (their target rules), for producers to check at enqueue."""
        text = json.dumps(rules, sort_keys=True)
        guarded(lambda: self._r.set(self._keys.workers_webhook(), text, px=max(1, int(ttl_s * 1000))))

    def workers_rules(self) -> dict[str, Any] | None:
        """The target rules the workers announced lately (None: no worker has, or not lately)."""
        raw = guarded(lambda: self._r.get(self._keys.workers_webhook()))
        return json.loads(raw) if raw else None

    def due(self, now_s: float, limit: int = 200) -> list[Pending]:
        """Callbacks past due (a retry, or a lost message or worker), oldest first."""
        members = guarded(lambda: self._r.zrangebyscore(self._keys.callbacks(), "-inf", now_s, 0, limit))
        return [Pending.parse(m) for m in members]

    def ready(self, item: Pending, now_s: float, pickup_until_s: float) -> bool:
        """Mark a due callback as published again; False if it is not due any more."""
        return bool(self._call(self._ready, item, [item.field, item.member, now_s, pickup_until_s]))

    def state(self, item: Pending) -> str | None:
        """The callback's state as stored (``"<attempts>|<phase>"``, ``sent``, ``failed``), for tests and
        tools."""
        value = guarded(lambda: self._r.hget(self._keys.flags(item.job_id), item.field))
        return None if value is None else str(value)

    def _call(self, script: Any, item: Pending, args: list[Any]) -> Any:
        keys = [self._keys.flags(item.job_id), self._keys.callbacks()]
        return guarded(lambda: script(keys=keys, args=args))

    def _acked(self, script: Any, item: Pending, args: list[Any], what: str) -> Any:
        keys = [self._keys.flags(item.job_id), self._keys.callbacks()]
        return self._replica_ack.call(script, keys, args, what)


def delivery_of(flags: dict[str, str]) -> dict[str, Any] | None:
    """The latest callback's delivery in a job's flags hash: ``state`` (pending, delivered, failed),
    ``attempts`` made, and the latest attempt's ``last_status`` (HTTP) and ``last_error``; None if none is
    owed."""
    tags = [name.removeprefix("callback:") for name in flags if name.startswith("callback:")]
    if not tags:
        return None
    tag = max(tags, key=_tag_order)
    value = str(flags[f"callback:{tag}"])
    last = json.loads(flags.get(f"callback-last:{tag}") or "{}")
    state: DeliveryState = "delivered" if value == "sent" else "failed" if value == "failed" else "pending"
    attempts = int(last.get("attempts") or 0) if state != "pending" else int(value.split("|", 1)[0] or 0)
    return {
        "state": state,
        "attempts": attempts,
        "last_status": last.get("last_status"),
        "last_error": last.get("last_error"),
    }


def _tag_order(tag: str) -> tuple[int, int]:
    """Rounds in order, a reviewer's accept after its round's own callback."""
    job_round, _, kind = tag.partition("-")
    return (int(job_round) if job_round.isdigit() else -1, 1 if kind else 0)
