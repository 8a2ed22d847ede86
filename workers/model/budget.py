"""Per-model request and token budgets shared by every worker through Redis, on Redis' clock.

Each model with a limit (``settings.limits``) has two continuously refilled buckets, as the
provider meters it: requests (capacity RPM, refilled at RPM/60 a second) and tokens (capacity TPM).
Both live in one Redis hash per model, changed only by one Lua script that reads Redis' ``TIME``,
so workers' clocks need not agree and every change is atomic:

- ``reserve``: a call takes 1 request + its reservation (prompt estimate + max_completion_tokens) if
  both buckets hold it and no 429 block is running; else nothing is taken and the call is given a
  *slot*: the later of when the buckets would hold it and the end of the queue of calls deferred
  before it, the queue then growing by this call's share of the refill (its tokens / TPM, or
  1 / RPM). Calls deferred together so come back one refill apart, not all at once to fight over
  one refill. Slots never lie beyond ``horizon_s`` (a deferral's longest countdown); a call whose
  slot was taken by a newcomer is simply given a later one;
- a bulk call (``keep_share``: ``dispatch.interactive_budget_share``) is granted only if the buckets
  keep that share of their capacity after it, so interactive calls find budget while bulk calls
  wait; deferred interactive calls get slots of their own queue, never behind deferred bulk calls;
- ``settle``: after the reply, the difference between the reservation and what the call cost
  (``budget_math.charged_tokens``) is refunded or charged;
- ``correct``: a reply's ``x-ratelimit-remaining-*`` headers lower the buckets to what the provider
  says is left (plus what refilled while the reply was on its way: never below the truth);
- ``block``: a 429's ``retry-after`` stops every call of the model until then, and its tokens go back;
- ``record`` / ``stats``: counters of what the model's calls were served and metered, and how many
  were deferred for the budget and for how long (``suture stats``, the batch report).

A model without a limit is never metered. Errors: none of its own; Redis errors propagate (the task
treats them as an outage and re-runs the step).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import redis

from suture.config.simulator_sections import ModelRateLimit
from suture.workers.model.budget_math import Remaining

# ARGV: op, rpm (0: none), tpm (0: none), horizon ms, then per op: reserve tokens keep (the share of
# each bucket the call must leave: a bulk call's interactive reserve) | settle delta | correct requests
# tokens (-1: unknown) | block ms refund. Returns the wait in ms (reserve), else 0. Deferred interactive
# calls queue apart from bulk ones ('iqueue'), so they never wait behind bulk calls' slots.
_BUDGET = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local op, rpm, tpm, horizon = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local v = redis.call('HMGET', KEYS[1], 'req', 'tok', 'at', 'until', 'queue', 'iqueue')
local req, tok = tonumber(v[1]) or rpm, tonumber(v[2]) or tpm
local elapsed = math.max(0, now - (tonumber(v[3]) or now))
local blocked, queue, iqueue = tonumber(v[4]) or 0, tonumber(v[5]) or 0, tonumber(v[6]) or 0
req = math.min(rpm, req + elapsed * rpm / 60000)
tok = math.min(tpm, tok + elapsed * tpm / 60000)
local wait = 0
if op == 'reserve' then
  local keep = tonumber(ARGV[6])
  local keep_req, keep_tok = keep * rpm, keep * tpm
  local cost = math.min(tonumber(ARGV[5]), tpm - keep_tok)
  local ready = math.max(now, blocked)
  local spacing = 0
  if rpm > 0 then
    if req - keep_req < 1 then ready = math.max(ready, now + (1 + keep_req - req) * 60000 / rpm) end
    spacing = 60000 / rpm
  end
  if tpm > 0 then
    if tok - keep_tok < cost then ready = math.max(ready, now + (cost + keep_tok - tok) * 60000 / tpm) end
    spacing = math.max(spacing, cost * 60000 / tpm)
  end
  if ready <= now then
    if rpm > 0 then req = req - 1 end
    if tpm > 0 then tok = tok - cost end
  elseif keep > 0 then
    local slot = math.min(math.max(ready, queue), now + horizon)
    queue = math.min(slot + spacing, now + horizon)
    wait = slot - now
  else
    local slot = math.min(math.max(ready, iqueue), now + horizon)
    iqueue = math.min(slot + spacing, now + horizon)
    wait = slot - now
  end
elseif op == 'settle' then
  tok = math.min(tpm, tok - tonumber(ARGV[5]))
elseif op == 'correct' then
  local r, k = tonumber(ARGV[5]), tonumber(ARGV[6])
  if rpm > 0 and r >= 0 then req = math.min(req, r) end
  if tpm > 0 and k >= 0 then tok = math.min(tok, k) end
elseif op == 'block' then
  blocked = math.max(blocked, now + tonumber(ARGV[5]))
  tok = math.min(tpm, tok + tonumber(ARGV[6]))
end
redis.call('HSET', KEYS[1], 'req', req, 'tok', tok, 'at', now, 'until', blocked,
           'queue', queue, 'iqueue', iqueue)
redis.call('PEXPIRE', KEYS[1], 120000 + math.ceil(math.max(0, blocked - now, queue - now, iqueue - now)))
return math.ceil(wait)
"""


# Per-model counters of the calls made under a limit (``Budget.record``): calls settled, tokens served
# (prompt + completion) and metered (as the provider counts: ``client.metering``), calls deferred for the
# budget and their total wait, 429s. Kept a day after the last change.
STAT_FIELDS = (
    "calls",
    "served_tokens",
    "metered_tokens",
    "deferred_budget",
    "deferred_budget_s",
    "rate_limited",
)
STATS_TTL_S = 86_400


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


@dataclass(frozen=True)
class Reservation:
    """What one call took of its model's budget (tokens 0 for a model without a limit)."""

    model: str
    tokens: int
    wait_s: float = 0.0

    @property
    def granted(self) -> bool:
        """True if the call may be sent now; else it must wait ``wait_s``."""
        return self.wait_s <= 0


class Budget:
    """The cluster's per-model budgets (``limits``), kept in Redis under ``prefix``; slots within
    ``horizon_s``."""

    def __init__(
        self,
        client: redis.Redis,
        limits: Mapping[str, ModelRateLimit],
        *,
        horizon_s: float = 300.0,
        prefix: str = "suture:budget",
    ) -> None:
        self._limits = {model: limit for model, limit in limits.items() if limit.rpm or limit.tpm}
        self._horizon_ms = max(1, math.ceil(horizon_s * 1000))
        self._prefix = prefix
        self._redis = client
        self._script = client.register_script(_BUDGET)

    def limited(self, model: str) -> bool:
        """True if this model has a configured limit."""
        return model in self._limits

    def reserve(self, model: str, tokens: int, *, keep_share: float = 0.0) -> Reservation:
        """Take 1 request + ``tokens`` now if both fit, leaving ``keep_share`` of each bucket (a bulk call
        leaves the interactive reserve); else take nothing and say how long to wait."""
        if not self.limited(model):
            return Reservation(model, 0)
        wait_ms = int(self._run(model, "reserve", tokens, keep_share))
        return Reservation(model, 0 if wait_ms else tokens, wait_ms / 1000)

    def settle(self, reservation: Reservation, charged: int) -> None:
        """Refund (or charge) the difference between a granted reservation and what the call cost."""
        if reservation.tokens and charged != reservation.tokens:
            self._run(reservation.model, "settle", charged - reservation.tokens)

    def correct(self, model: str, remaining: Remaining) -> None:
        """Lower the model's buckets to what the provider says is left (``Remaining`` already aged)."""
        if self.limited(model) and remaining.known:
            unknown = -1
            requests = unknown if remaining.requests is None else remaining.requests
            tokens = unknown if remaining.tokens is None else remaining.tokens
            self._run(model, "correct", requests, tokens)

    def block(self, model: str, wait_s: float, refund_tokens: int = 0) -> None:
        """Hold every call of ``model`` for ``wait_s`` (a 429's retry-after); give back ``refund_tokens``."""
        if self.limited(model):
            self._run(model, "block", math.ceil(max(0.0, wait_s) * 1000), refund_tokens)

    def record(self, model: str, counts: Mapping[str, float]) -> None:
        """Add to the model's call counters (``STAT_FIELDS``), kept apart from the buckets and only for a
        limited model."""
        if not self.limited(model) or not counts:
            return
        key = f"{self._prefix}:stats:{model}"
        pipe = self._redis.pipeline(transaction=False)
        for field, amount in counts.items():
            pipe.hincrbyfloat(key, field, amount)
        pipe.expire(key, STATS_TTL_S)
        pipe.execute()

    def stats(self) -> dict[str, dict[str, float]]:
        """Each limited model's counters since they were last idle for ``STATS_TTL_S`` (``STAT_FIELDS``, 0
        if none)."""
        out: dict[str, dict[str, float]] = {}
        for model in sorted(self._limits):
            raw = self._redis.hgetall(f"{self._prefix}:stats:{model}")
            values = {_text(k): float(v) for k, v in raw.items()}
            out[model] = {field: values.get(field, 0.0) for field in STAT_FIELDS}
        return out

    def _run(self, model: str, op: str, *args: float) -> int:
        limit = self._limits[model]
        argv: list[str | float] = [op, limit.rpm or 0, limit.tpm or 0, self._horizon_ms, *args]
        return int(self._script(keys=[f"{self._prefix}:{model}"], args=argv))
