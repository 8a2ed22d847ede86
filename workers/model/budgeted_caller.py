"""A worker's model caller under the cluster's budgets: reserve, call, settle; never wait in the thread.

A call first reserves its model's budget (``suture.workers.model.budget``): 1 request and its prompt
estimate + ``max_completion_tokens``. If the budget cannot hold it now, or the provider answers 429,
the call is not made (or not retried) here: ``CallDeferred`` says how long to wait, and the task
adapter re-queues its task with that countdown (``suture.workers.runtime.deferral``), so a waiting
call costs no thread. A reply's headers lower the shared budget to what the provider says is left; its
usage settles the reservation. The error it adds to the model package:

    CallDeferred(model, wait_s, reason)   the call must wait ``wait_s``; nothing was sent or kept
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import redis

from suture.config.settings import Settings
from suture.tasks.calls import ModelCall, ModelReply
from suture.workers.model.budget import Budget, Reservation
from suture.workers.model.budget_math import aged, charged_tokens, prompt_estimate, remaining_of
from suture.workers.model.client import ModelClient
from suture.workers.model.failures import ModelClientError, RateLimited

log = logging.getLogger(__name__)

# A 429 without retry-after: wait this long before the call is tried again.
DEFAULT_RETRY_AFTER_S = 1.0


@dataclass
class CallDeferred(ModelClientError):
    """A model call that must wait ``wait_s`` before it is tried (``reason``: budget | provider HTTP 429)."""

    model: str
    wait_s: float
    reason: str

    def __str__(self) -> str:
        return f"model {self.model}: call deferred {self.wait_s:.2f} s ({self.reason})"


class BudgetedCaller:
    """Calls ``client`` for each ``ModelCall`` within ``budget``; raises ``CallDeferred`` instead of waiting."""

    def __init__(self, settings: Settings, budget: Budget, client: ModelClient) -> None:
        self._settings = settings
        self._budget = budget
        self._client = client

    def __call__(self, call: ModelCall) -> ModelReply:
        """One call within the budget; ``CallDeferred`` if it must wait (budget spent, or a 429)."""
        guess = prompt_estimate(call.messages)
        completion = call.max_completion_tokens or self._settings.client.max_completion_tokens
        keep = self._settings.dispatch.interactive_budget_share if call.priority == "bulk" else 0.0
        reservation = self._budget.reserve(call.model, guess + completion, keep_share=keep)
        if not reservation.granted:
            raise CallDeferred(call.model, reservation.wait_s, "budget")
        sent = time.monotonic()
        try:
            reply = self._client.call(
                call,
                defer_rate_limits=True,
                on_headers=lambda headers: self._correct(call.model, headers, time.monotonic() - sent),
            )
        except RateLimited as limited:
            raise self._rate_limited(limited, reservation) from None
        # A failed call keeps its reservation: the provider may have counted it.
        if reply.error is None:
            charged = charged_tokens(reply.usage, reservation.tokens, guess)
            _quietly(lambda: self._budget.settle(reservation, charged))
        return reply

    def _rate_limited(self, limited: RateLimited, reservation: Reservation) -> CallDeferred:
        """A 429: every call of the model holds for its retry-after, and this call's tokens go back."""
        wait_s = DEFAULT_RETRY_AFTER_S if limited.retry_after_s is None else limited.retry_after_s
        _quietly(lambda: self._budget.block(limited.model, wait_s, refund_tokens=reservation.tokens))
        self._correct(limited.model, limited.headers, 0.0)
        return CallDeferred(limited.model, wait_s, "provider HTTP 429")

    def _correct(self, model: str, headers: Mapping[str, str], age_s: float) -> None:
        limit = self._settings.limits.get(model)
        if limit is not None:
            remaining = aged(remaining_of(headers), age_s, limit.rpm, limit.tpm)
            _quietly(lambda: self._budget.correct(model, remaining))


def _quietly(update: Callable[[], None]) -> None:
    """A budget update after the call was made: best-effort, so a Redis outage now never makes the step
    re-run (and the call be made twice). Skipped, the budget stays where the reservation left it."""
    try:
        update()
    except redis.exceptions.RedisError as exc:
        log.info("budget update skipped, Redis unavailable: %s", type(exc).__name__)
