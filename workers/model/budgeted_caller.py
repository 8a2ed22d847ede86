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
from suture.tasks.calls import ModelCall, ModelReply, Usage
from suture.workers.model.budget import Budget, Reservation
from suture.workers.model.budget_math import aged, charged_tokens, prompt_estimate, remaining_of
from suture.workers.model.client import ModelClient
from suture.workers.model.failures import ModelClientError, RateLimited
from suture.workers.model.wire import sized

log = logging.getLogger(__name__)

# A 429 without retry-after: wait this long before the call is tried again.
DEFAULT_RETRY_AFTER_S = 1.0
# A reply cut off by its cap is sent again with the cap doubled: its reservation waits at most this long.
RESEND_WAIT_S = 30.0


@dataclass
class CallDeferred(ModelClientError):
    """A model call that must wait ``wait_s`` before it is tried (``reason``: budget | provider HTTP 429)."""

    model: str
    wait_s: float
    reason: str

    def __str__(self) -> str:
        return f"model {self.model}: call deferred {self.wait_s:.2f} s ({self.reason})"


class BudgetedCaller:
    """Calls ``client`` for each ``ModelCall`` within ``budget``; raises ``CallDeferred`` instead of
    waiting."""

    def __init__(self, settings: Settings, budget: Budget, client: ModelClient) -> None:
        self._settings = settings
        self._budget = budget
        self._client = client

    def __call__(self, call: ModelCall) -> ModelReply:
        """One call within the budget; ``CallDeferred`` if it must wait (budget spent, or a 429)."""
        guess = prompt_estimate(call.messages)
        # The budget reserves exactly the cap the client will ask for (the client sizes the call the same
        # way, and keeps its ceiling for a cut reply's doubled cap).
        reservation = self._reserve(sized(call, self._settings), guess)
        if not reservation.granted:
            self._record(call.model, deferred_budget=1, deferred_budget_s=reservation.wait_s)
            raise CallDeferred(call.model, reservation.wait_s, "budget")
        held = [reservation]
        cut: list[ModelReply] = []

        def before_resend(bigger: ModelCall, reply: ModelReply) -> bool:
            """A reply cut off by its cap: settle it, then reserve the doubled cap (waiting for it here)."""
            self._settle(held[0], reply.usage, guess, reply)
            cut.append(reply)
            granted = self._reserve_waiting(bigger, guess, held[0].model)
            if granted is not None:
                held[0] = granted
            return granted is not None

        sent = time.monotonic()
        try:
            reply = self._client.call(
                call,
                defer_rate_limits=True,
                on_headers=lambda headers: self._correct(call.model, headers, time.monotonic() - sent),
                before_resend=before_resend,
            )
        except RateLimited as limited:
            raise self._rate_limited(limited, held[0]) from None
        # A failed call keeps its reservation: the provider may have counted it.
        if reply.error is None and not (cut and reply is cut[0]):
            last = reply.usage if not cut else _less(reply.usage, cut[0].usage)
            self._settle(held[0], last, guess, reply)
        return reply

    def _reserve(self, call: ModelCall, guess: int) -> Reservation:
        keep = self._settings.dispatch.interactive_budget_share if call.priority == "bulk" else 0.0
        return self._budget.reserve(call.model, guess + (call.max_completion_tokens or 0), keep_share=keep)

    def _reserve_waiting(self, call: ModelCall, guess: int, model: str) -> Reservation | None:
        """Reserve a re-sent call, waiting in this thread for its slot (rare: only a reply longer than its
        estimate) up to ``RESEND_WAIT_S``; None if it does not come by then (the cut reply is kept)."""
        deadline = time.monotonic() + RESEND_WAIT_S
        while True:
            reservation = _quietly_reserve(lambda: self._reserve(call, guess))
            if reservation is None or reservation.granted:
                return reservation or Reservation(model, 0)
            if time.monotonic() + reservation.wait_s > deadline:
                return None
            time.sleep(reservation.wait_s)

    def _settle(self, reservation: Reservation, usage: Usage, guess: int, reply: ModelReply) -> None:
        """Settle a reply's reservation to what the provider counted (``client.metering``), and count it."""
        metering = self._settings.client.metering
        charged = charged_tokens(usage, reservation.tokens, guess, metering)
        served = usage.input_tokens + usage.output_tokens
        cap = reply.max_completion_tokens or 0
        metered = usage.input_tokens + (cap if metering == "reserved" else usage.output_tokens)
        _quietly(lambda: self._budget.settle(reservation, charged))
        self._record(reservation.model, calls=1, served_tokens=served, metered_tokens=metered)

    def _record(self, model: str, **counts: float) -> None:
        _quietly(lambda: self._budget.record(model, counts))

    def _rate_limited(self, limited: RateLimited, reservation: Reservation) -> CallDeferred:
        """A 429: every call of the model holds for its retry-after, and this call's tokens go back."""
        wait_s = DEFAULT_RETRY_AFTER_S if limited.retry_after_s is None else limited.retry_after_s
        self._record(limited.model, rate_limited=1)
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


def _quietly_reserve(reserve: Callable[[], Reservation]) -> Reservation | None:
    """A re-sent call's reservation; None when Redis is unavailable (the call is then sent unmetered)."""
    try:
        return reserve()
    except redis.exceptions.RedisError as exc:
        log.info("budget reservation skipped, Redis unavailable: %s", type(exc).__name__)
        return None


def _less(total: Usage, part: Usage) -> Usage:
    """``total`` without ``part`` (a re-sent call's own usage, out of the reply's sum of both)."""
    return Usage(
        input_tokens=total.input_tokens - part.input_tokens,
        cached_input_tokens=total.cached_input_tokens - part.cached_input_tokens,
        output_tokens=total.output_tokens - part.output_tokens,
        reasoning_tokens=total.reasoning_tokens - part.reasoning_tokens,
    )
