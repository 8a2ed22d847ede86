"""The label values each counter can take, known before any event: so every series starts at 0.

Prometheus' ``increase()`` and ``rate()`` see nothing of a series' first sample, so a counter that
first appears at 1 hides the first failure of each kind from every dashboard and alert. A process
that exposes metrics therefore creates every series it can name up front (``metrics.prime``):
statuses and causes from the flow's vocabulary, priority classes, the registered contracts, and the
models the settings name (policy steps, limits).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, get_args

from suture.config.settings import Settings
from suture.contracts.registry import contract_names
from suture.tasks.causes import Cause
from suture.tasks.dispatch_order import PRIORITY_CLASSES
from suture.tasks.policy import Mode
from suture.tasks.vocabulary import AttemptOutcome

NO_CAUSE = "none"
GIVEN_UP_REASONS = ("attempts", "refused")
DEFERRAL_REASONS = ("budget", "provider_429")
# Causes a soft delivery can have; every other cause ends a job failed (``suture.tasks.causes``).
SOFT_CAUSES = ("exhausted", "budget", "deadline", "worker_lost")


def endings() -> list[tuple[str, str]]:
    """Every (status, cause) a finished job is counted under."""
    failed = [("failed", cause) for cause in get_args(Cause) if cause != "exhausted"]
    soft = [("soft_delivered", cause) for cause in SOFT_CAUSES]
    plain = [(status, NO_CAUSE) for status in ("delivered", "refused", "cancelled")]
    return [*plain, *soft, *failed]


def priorities() -> tuple[str, ...]:
    return tuple(PRIORITY_CLASSES)


def contracts() -> list[str]:
    return contract_names()


def modes() -> tuple[str, ...]:
    return get_args(Mode)


def outcomes() -> tuple[str, ...]:
    return get_args(AttemptOutcome)


def models(settings: Settings) -> list[str]:
    """The models the settings name: in the policies' steps and the limits (not every priced model)."""
    return sorted(set(_models_in(settings.policies)) | set(settings.limits))


def _models_in(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "model" and isinstance(item, str):
                yield item
            else:
                yield from _models_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from _models_in(item)
