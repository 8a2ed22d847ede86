"""One callback delivery, from claiming it in the outbox to recording how it went.

``owe`` adds a job's callback to the outbox once and publishes ``suture.callback`` for it. A publish
that meets a broker outage raises, so the step that owed it re-runs (steps are idempotent) and
publishes again; any other failed publish, or a message lost after it went out, is left to the
watchdog: ``republish_due`` sends again what no delivery took up within ``webhook.pickup_lease_s``.
``Sender.send`` is the
delivery itself, a coroutine the courier runs: claim, read the result owed, check the target again
after resolving it, sign, POST within the deadline, then mark it sent, due again after a backoff,
or given up (attempts run out, or the target is refused: a refusal is never retried). Each outcome
is stored with the attempt count and the last HTTP status or error (the job's callback state,
``Outbox.delivery``); a callback given up is told to ``Sender.on_given_up``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import redis
from kombu.exceptions import OperationalError

from suture.config.settings import WebhookSettings
from suture.workers.errors import JobNotFound
from suture.workers.store.job_store import JobStore
from suture.workers.store.outbox import LastAttempt, Pending
from suture.workers.webhooks.addresses import IPAddress
from suture.workers.webhooks.exchange import Exchange, post
from suture.workers.webhooks.signing import message_id, signed_headers
from suture.workers.webhooks.targets import (
    CallbackRefused,
    Target,
    addresses_of,
    literal_address,
    parse_target,
    resolve_target,
)

log = logging.getLogger(__name__)

# A delivery under way past its deadline by this much is taken to have died with its worker.
SENDING_GRACE_S = 5.0
# A broker or Redis that cannot be reached: the owing step re-runs and publishes again.
OUTAGES: tuple[type[BaseException], ...] = (
    OperationalError,
    OSError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
)

Publish = Callable[[str, str], None]


def owe(store: JobStore, item: Pending, publish: Publish, *, lease_s: float) -> bool:
    """Owe the callback (once) and publish its message; True if it was added now.

    Raises a broker outage so the calling step re-runs: the outbox then still holds the callback
    unclaimed, and the re-run publishes it again instead of leaving it to the watchdog.
    """
    added = store.outbox.add(item, time.time() + lease_s)
    if not added:
        return False
    try:
        publish(item.job_id, item.tag)
    except OUTAGES:
        raise
    except Exception as exc:  # not an outage: the outbox holds it, the watchdog sends it later
        log.warning(
            "job %s: callback %s waits for the watchdog: %s", item.job_id, item.tag, type(exc).__name__
        )
    return added == 1


def republish_due(store: JobStore, publish: Publish, now_s: float, *, lease_s: float) -> int:
    """Publish every callback past due again (a retry's time came, or its message or worker was lost)."""
    count = 0
    for item in store.outbox.due(now_s):
        if store.outbox.ready(item, now_s, now_s + lease_s):
            publish(item.job_id, item.tag)
            count += 1
    return count


def result_owed(store: JobStore, item: Pending) -> tuple[str, dict[str, Any]] | None:
    """The callback URL and the result the callback carries (its round's), or None if there is none."""
    record = store.load(item.job_id)
    callback = record.job_spec.callback
    job_round = int(item.tag.split("-", 1)[0])
    if job_round == record.round:
        result = record.result
    else:
        history = store.history(item.job_id)
        result = history[job_round] if job_round < len(history) else None
    return (str(callback), result) if callback and result else None


@dataclass(frozen=True)
class GivenUp:
    """A callback given up: which, where it went (host only), how many attempts, how the last one went."""

    job_id: str
    tag: str
    host: str
    attempts: int
    status: int | None
    reason: str  # the last attempt's outcome or the refusal: never the body sent or received


@dataclass(frozen=True)
class Outcome:
    """How one delivery went: ``sent``, ``retry``, ``failed``, ``refused`` or ``skipped``; a retry's wait."""

    name: str
    retry_in_s: float = 0.0


def _no_report(given_up: GivenUp) -> None:
    return None


@dataclass
class Sender:
    """Delivers callbacks for one worker process: its store and webhook settings.

    ``on_given_up`` is told of every callback given up (the runtime counts it, reports it to Sentry and
    marks it failed in Flower); it must not raise.
    """

    store: JobStore
    settings: WebhookSettings
    on_given_up: Callable[[GivenUp], None] = _no_report

    async def send(self, item: Pending) -> Outcome:
        """Deliver one owed callback once; a retry's outcome says when the next attempt is due."""
        now = time.time()
        lease_until = now + self.settings.deadline_s + SENDING_GRACE_S
        attempts = await asyncio.to_thread(self.store.outbox.claim, item, now, lease_until)
        if attempts is None:
            return Outcome("skipped")
        try:
            owed = await asyncio.to_thread(result_owed, self.store, item)
        except JobNotFound:
            owed = None
        if owed is None:
            await asyncio.to_thread(self.store.outbox.give_up, item, LastAttempt(attempts, None, "no result"))
            return Outcome("skipped")
        try:
            exchange = await self._deliver(*owed, item)
        except CallbackRefused as exc:
            log.warning("job %s: callback given up: %s", item.job_id, exc)
            await asyncio.to_thread(self.store.outbox.give_up, item, LastAttempt(attempts, None, exc.reason))
            await asyncio.to_thread(self._report, item, owed[0], attempts, None, f"refused: {exc.reason}")
            return Outcome("refused")
        return await self._record(item, owed[0], attempts + 1, exchange)

    async def _deliver(self, url: str, result: dict[str, Any], item: Pending) -> Exchange:
        target = parse_target(url, self.settings)
        deadline = self.settings.deadline_s
        started = time.monotonic()
        try:
            async with asyncio.timeout(deadline):
                address = resolve_target(target, self.settings, addresses=await _resolve(target))
        except TimeoutError:
            return Exchange(None, f"{target.host!r} did not resolve within {deadline:g} s")
        body = json.dumps(result, separators=(",", ":"))
        headers = signed_headers(self.settings.secret, message_id(item.job_id, item.tag), body)
        left = max(0.1, deadline - (time.monotonic() - started))
        return await post(
            target,
            address,
            body,
            headers,
            deadline_s=left,
            max_response_bytes=self.settings.max_response_bytes,
        )

    async def _record(self, item: Pending, url: str, attempts: int, exchange: Exchange) -> Outcome:
        outbox = self.store.outbox
        last = LastAttempt(attempts, exchange.status, exchange.error)
        if exchange.ok:
            await asyncio.to_thread(outbox.sent, item, last)
            return Outcome("sent")
        if attempts >= self.settings.max_attempts:
            log.warning(
                "job %s: callback given up after %d attempts: %s", item.job_id, attempts, exchange.describe()
            )
            await asyncio.to_thread(outbox.give_up, item, last)
            await asyncio.to_thread(self._report, item, url, attempts, exchange.status, exchange.describe())
            return Outcome("failed")
        delay = backoff_s(attempts, self.settings)
        log.info(
            "job %s: callback attempt %d: %s; again in %.1f s",
            item.job_id,
            attempts,
            exchange.describe(),
            delay,
        )
        await asyncio.to_thread(outbox.retry_at, item, time.time() + delay, last)
        return Outcome("retry", delay)

    def _report(self, item: Pending, url: str, attempts: int, status: int | None, reason: str) -> None:
        host = urlsplit(url).hostname or "?"
        try:
            self.on_given_up(GivenUp(item.job_id, item.tag, host, attempts, status, reason))
        except Exception:  # a report must never cost the delivery's bookkeeping
            log.exception("job %s: reporting a callback given up failed", item.job_id)


def backoff_s(attempts: int, settings: WebhookSettings) -> float:
    """The wait after ``attempts`` failed deliveries: doubling from the base, capped, +-20 % jitter.

    The courier waits it out itself (``suture.workers.webhooks.courier``), so the gaps are these; the
    watchdog's sweep only takes over a retry whose worker died.
    """
    base = min(settings.backoff_max_s, settings.backoff_base_s * 2 ** (attempts - 1))
    return float(base * random.uniform(0.8, 1.2))


async def _resolve(target: Target) -> list[IPAddress]:
    literal = literal_address(target.host)
    if literal is not None:
        return [literal]
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise CallbackRefused(target.url, f"host {target.host!r} does not resolve ({exc})") from None
    return addresses_of(infos)
