"""Which waiting job goes to the workers next: interactive before bulk, a share kept for bulk, tenants by weight.

Pure decisions over the dispatcher's small state (``DispatchTurns``), so the order is tested without
Redis or Celery (``suture.workers.runtime.feeder`` applies them):

- ``next_class``: interactive while it waits, except that each dispatch made while both classes wait
  earns bulk ``bulk_share`` of a turn, and bulk takes a turn when it has earned a whole one. With the
  default share (0.1) one dispatch in ten goes to bulk while interactive work waits, so a steady
  interactive stream never starves a batch; with nothing interactive waiting bulk takes every turn.
- ``next_tenant``: smooth weighted round-robin (each waiting tenant gains its weight, the richest is
  served and pays the total): over any window, tenants are served in proportion to their weights, and
  interleaved rather than in runs. A tenant without a configured weight weighs 1.
"""

from __future__ import annotations

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


def next_tenant(
    job_class: PriorityClass, waiting: list[str], weights: dict[str, int], turns: DispatchTurns
) -> str | None:
    """The tenant of ``job_class`` whose oldest job goes next, by smooth weighted round-robin (None: none waits)."""
    if not waiting:
        return None
    standing = turns.tenant_standing.setdefault(job_class, {})
    for gone in set(standing) - set(waiting):  # a tenant that stopped waiting starts afresh
        del standing[gone]
    total = 0
    for tenant in sorted(waiting):
        weight = max(0, weights.get(tenant, DEFAULT_WEIGHT))
        standing[tenant] = standing.get(tenant, 0) + weight
        total += weight
    chosen = max(sorted(waiting), key=lambda tenant: standing[tenant])
    standing[chosen] -= total
    return chosen
