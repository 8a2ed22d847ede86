"""Which waiting job goes to the workers next: interactive before bulk, a share kept for bulk, tenants by
weight.

Pure decisions over the dispatcher's small state (``DispatchTurns``), so the order is tested without
Redis or Celery (``suture.workers.runtime.feeder`` applies them):

- ``next_class``: interactive while it waits, except that each dispatch made while both classes wait
  earns bulk ``bulk_share`` of a turn, and bulk takes a turn when it has earned a whole one. With the
  default share (0.1) one dispatch in ten goes to bulk while interactive work waits, so a steady
  interactive stream never starves a batch; with nothing interactive waiting bulk takes every turn.
- ``bulk_credit_after``: the same share, kept by each worker among the model calls of jobs already
  started: its credit toward taking a bulk call ahead of an interactive one, after each call it takes.
- ``under_share``: whether a tenant runs fewer bulk jobs than its weighted share of all of them; such
  a tenant's model calls are taken before the other bulk calls, so a tenant arriving with 10 jobs
  beside another's 1,000 does not queue behind the 1,000's calls.
- ``bulk_fill``: how many more bulk jobs may start whatever the model queues hold, to keep about
  ``per_slot`` jobs in flight per bulk slot of the live workers: started jobs alternate long model
  calls with CPU-bound repairs, and a steady number in flight keeps both going at once instead of
  in waves (all first calls, then all repairs, then all first calls again).
- ``FillRamp``: paces that fill. Each job that ends earns ``per_slot`` new ones, so the jobs in
  flight grow as started ones end: a batch starts with what the ready target sends, not with every
  slot's worth at once, and its jobs' ends, spread out, spread its starts.
- ``tail_fill``: a batch's last few waiting jobs (at most ``tail_share`` of that fill) go with the
  jobs in flight, not as a small wave after them, which would run on mostly idle slots.
- ``next_tenant``: smooth weighted round-robin (each waiting tenant gains its weight, the richest is
  served and pays the total): over any window, tenants are served in proportion to their weights, and
  interleaved rather than in runs. A tenant without a configured weight weighs 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, get_args

PriorityClass = Literal["interactive", "bulk"]
PRIORITY_CLASSES: tuple[PriorityClass, ...] = get_args(PriorityClass)
DEFAULT_WEIGHT = 1


@dataclass
class DispatchTurns:
    """What the dispatcher remembers between dispatches: bulk's earned credit, each tenant's standing."""

    bulk_credit: float = 0.0
    tenant_standing: dict[str, dict[str, int]] = field(default_factory=dict)


def next_class(
    waiting: dict[PriorityClass, bool], turns: DispatchTurns, bulk_share: float
) -> PriorityClass | None:
    """The class whose job goes next (None: nothing waits); updates ``turns.bulk_credit``."""
    interactive, bulk = waiting.get("interactive", False), waiting.get("bulk", False)
    if not (interactive and bulk):
        turns.bulk_credit = 0.0  # credit is earned only while both wait: no burst of bulk later
        return "interactive" if interactive else "bulk" if bulk else None
    turns.bulk_credit += bulk_share
    if turns.bulk_credit >= 1.0 - 1e-9:
        turns.bulk_credit -= 1.0
        return "bulk"
    return "interactive"


def bulk_credit_after(credit: float, share: float, *, bulk_first: bool, served: PriorityClass) -> float:
    """A worker's credit toward its next bulk turn, once it took a call of class ``served``.

    ``bulk_first``: the worker looked at bulk calls first (it had a whole credit). It cannot see
    whether the other queue held anything, so it infers it: taking interactive while looking at bulk
    first, or bulk while looking at interactive first, means the queue looked at first was empty,
    and credit is earned only while both wait. Otherwise a bulk turn spends a credit and an
    interactive one earns ``share`` of one, up to one whole credit (no burst of bulk later).
    """
    if served == "interactive":
        return 0.0 if bulk_first else min(1.0, credit + share)
    return max(0.0, credit - 1.0) if bulk_first else 0.0


def next_tenant(
    job_class: PriorityClass,
    waiting: list[str],
    weights: dict[str, int],
    turns: DispatchTurns,
    eligible: list[str] | None = None,
) -> str | None:
    """The tenant of ``job_class`` whose oldest job goes next, by smooth weighted round-robin (None: none
    can).

    ``eligible``: the waiting tenants whose job can go now (default: all). The others keep their
    standing as it is, neither gaining nor losing, so a tenant held back a moment is not set back.
    """
    candidates = sorted(set(waiting if eligible is None else eligible) & set(waiting))
    standing = turns.tenant_standing.setdefault(job_class, {})
    for gone in set(standing) - set(waiting):  # a tenant that stopped waiting starts afresh
        del standing[gone]
    if not candidates:
        return None
    total = 0
    for tenant in candidates:
        weight = max(0, weights.get(tenant, DEFAULT_WEIGHT))
        standing[tenant] = standing.get(tenant, 0) + weight
        total += weight
    chosen = max(candidates, key=lambda tenant: standing[tenant])
    standing[chosen] -= total
    return chosen


def under_share(running: dict[str, int], tenant: str, weights: dict[str, int]) -> bool:
    """True if ``tenant`` runs at least one job fewer than its weighted share of ``running`` (jobs per
    tenant).

    A tenant alone is never under its share, whatever it runs. The margin of one job keeps tenants
    with a job or two each from flapping in and out (the dispatcher's weighted turns govern them).
    """
    mine = running.get(tenant, 0)
    active = {t for t, count in running.items() if count > 0} | {tenant}
    total_weight = sum(max(0, weights.get(t, DEFAULT_WEIGHT)) for t in active)
    if len(active) < 2 or total_weight <= 0:
        return False
    share = (
        sum(running.get(t, 0) for t in active) * max(0, weights.get(tenant, DEFAULT_WEIGHT)) / total_weight
    )
    return mine <= share - 1


def bulk_fill(live_slots: int, per_slot: float, in_flight: int) -> int:
    """How many more bulk jobs may be sent now to keep ``per_slot`` jobs in flight per live bulk slot.

    ``in_flight``: the jobs sent and not finished (of either class: interactive jobs hold slots too).
    0 when the workers' slots are unknown (no heartbeat yet, a broker without the slot count) or
    ``per_slot`` is 0: the dispatcher then feeds on its ready target alone.
    """
    if live_slots <= 0 or per_slot <= 0:
        return 0
    return max(0, math.ceil(live_slots * per_slot) - in_flight)


def tail_fill(live_slots: int, per_slot: float, in_flight: int, waiting: int, tail_share: float) -> int:
    """How many of a batch's last waiting jobs may go now with the jobs in flight (see module doc).

    When no more than ``tail_share`` of the fill's jobs still wait, they go at once rather than as a
    small wave of their own after the jobs in flight end (a few jobs alone leave most slots idle for a
    whole job's time). At most the fill plus that share are then in flight, however jobs trickle in.
    """
    if live_slots <= 0 or per_slot <= 0 or tail_share <= 0:
        return 0
    target = math.ceil(live_slots * per_slot)
    if waiting > target * tail_share:
        return 0
    return max(0, min(waiting, target + waiting - in_flight))


@dataclass
class FillRamp:
    """The bulk fill's pacing: how many jobs it may still send, earned by jobs that ended (see module doc)."""

    per_slot: float
    tokens: float = 0.0
    expected: int | None = None  # jobs in flight at the last look, plus those sent since (None: not looking)

    def observe(self, in_flight: int) -> None:
        """Credit the jobs that ended since the last look (``in_flight`` now against what was expected)."""
        if self.expected is not None:
            self.tokens += max(0, self.expected - in_flight) * self.per_slot
        self.expected = in_flight

    def sent(self) -> None:
        """Note a job sent (of either class): it is in flight at the next look, not a job that ended."""
        if self.expected is not None:
            self.expected += 1

    def allowed(self, limit: int) -> int:
        """How many the fill may send now, at most ``limit``; credit beyond it is not saved for a burst."""
        self.tokens = min(self.tokens, float(max(0, limit)))
        return int(self.tokens)

    def spend(self) -> None:
        """One job sent by the fill (not by the ready target)."""
        self.tokens = max(0.0, self.tokens - 1.0)

    def stop(self) -> None:
        """No bulk job waits: the next batch starts afresh, not with the credit of this one's ends."""
        self.tokens, self.expected = 0.0, None


def bulk_slot_limit(concurrency: int, interactive_share: float) -> int | None:
    """How many of a worker's ``concurrency`` slots bulk calls may hold at once (None: no limit).

    The rest, ``interactive_share`` of them and at least one, stay free for interactive calls, so one
    never waits for a bulk call to end; a worker of one slot keeps none (bulk must still run there).
    """
    if concurrency <= 1 or interactive_share <= 0:
        return None
    kept = max(1, round(concurrency * interactive_share))
    return max(1, concurrency - kept)
