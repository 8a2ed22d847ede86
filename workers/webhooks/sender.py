"""One callback delivery, from claiming it in the outbox to recording how it went.

``owe`` adds a job's callback to the outbox once and publishes ``suture.callback`` for it. A publish
that meets a broker outage raises, so the step that owed it re-runs (steps are idempotent) and
publishes again; any other failed publish, or a message lost after it went out, is left to the
watchdog: ``republish_due`` sends again what no delivery took up within ``webhook.pickup_lease_s``. ``Sender.send`` is the
delivery itself, a coroutine the courier runs: claim, read the result owed, check the target again
after resolving it, sign, POST within the deadline, then mark it sent, due again after a backoff,
or given up (attempts run out, or the target is refused: a refusal is never retried).
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

import redis
from kombu.exceptions import OperationalError

from suture.config.settings import WebhookSettings
from suture.workers.errors import JobNotFound
from suture.workers.store.job_store import JobStore
from suture.workers.store.outbox import Pending
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


@dataclass
class Sender:
    """Delivers callbacks for one worker process: its store and webhook settings."""

    store: JobStore
    settings: WebhookSettings

    async def send(self, item: Pending) -> str:
        """Deliver one owed callback once; returns ``sent``, ``retry``, ``failed``, ``refused`` or ``skipped``."""
        now = time.time()
        lease_until = now + self.settings.deadline_s + SENDING_GRACE_S
        attempts = await asyncio.to_thread(self.store.outbox.claim, item, now, lease_until)
        if attempts is None:
            return "skipped"
        try:
            owed = await asyncio.to_thread(result_owed, self.store, item)
        except JobNotFound:
            owed = None
        if owed is None:
            await asyncio.to_thread(self.store.outbox.give_up, item)
            return "skipped"
        try:
            exchange = await self._deliver(*owed, item)
        except CallbackRefused as exc:
            log.warning("job %s: callback given up: %s", item.job_id, exc)
            await asyncio.to_thread(self.store.outbox.give_up, item)
            return "refused"
        return await self._record(item, attempts + 1, exchange)

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

    async def _record(self, item: Pending, attempts: int, exchange: Exchange) -> str:
        outbox = self.store.outbox
        if exchange.ok:
            await asyncio.to_thread(outbox.sent, item)
            return "sent"
        if attempts >= self.settings.max_attempts:
            log.warning(
                "job %s: callback given up after %d attempts: %s", item.job_id, attempts, exchange.describe()
            )
            await asyncio.to_thread(outbox.give_up, item)
            return "failed"
        delay = backoff_s(attempts, self.settings)
        log.info(
            "job %s: callback attempt %d: %s; again in %.0f s",
            item.job_id,
            attempts,
            exchange.describe(),
            delay,
        )
        await asyncio.to_thread(outbox.retry_at, item, time.time() + delay)
        return "retry"


def backoff_s(attempts: int, settings: WebhookSettings) -> float:
    """The wait after ``attempts`` failed deliveries: doubling from the base, capped, +-20 % jitter."""
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
