"""The producer API for asyncio programs (ASGI apps): enqueue, await results, follow a job's events.

``await enqueue(...)`` admits and publishes a job exactly as ``suture.enqueue`` does (the same
checks, the same errors); publishing goes through Celery's client, which is synchronous, so that
one call runs in a thread. Everything that waits is on ``redis.asyncio`` and holds no thread: every
``await handle.result()`` of an event loop shares the loop's one subscription to deliveries
(``AsyncCompletions``), so a thousand waiters cost one connection, and ``handle.events()`` yields
the job's events (``running``, ``attempt``, ``repair``, ``delivered``: ``suture.workers.store.job_events``)
until it is delivered. ``await close()`` ends the loop's subscription and connections (an app's
shutdown hook).
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis

from suture.config.settings import Settings
from suture.workers import producer
from suture.workers.aio_completions import RECHECK_S, AsyncCompletions
from suture.workers.errors import JobNotFound, JobTimeout
from suture.workers.idempotency import check_owner
from suture.workers.store.connection import (
    SENTINEL_SCHEME,
    Pool,
    SentinelUrlError,
    async_redis_client,
    connection_options,
    parse_sentinel_url,
)
from suture.workers.store.job_store import sentinels_of, store_url
from suture.workers.store.keys import Keys
from suture.workers.store.outbox import delivery_of

PREFIX = "suture"


@dataclass
class _LoopState:
    """One event loop's async Redis client and delivery subscription for one store URL."""

    client: aioredis.Redis
    completions: AsyncCompletions


_loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _LoopState]] = (
    weakref.WeakKeyDictionary()
)


def _state(settings: Settings) -> _LoopState:
    url = store_url(settings)
    per_url = _loops.setdefault(asyncio.get_running_loop(), {})
    if url not in per_url and url.startswith(SENTINEL_SCHEME):
        client = _primary_client(url, settings)
        per_url[url] = _LoopState(client, AsyncCompletions(client, PREFIX))
    if url not in per_url:
        worker = settings.worker
        pool = Pool(worker.redis_pool_size, worker.redis_pool_timeout_s, worker.redis_timeout_s)
        client = async_redis_client(url, pool, settings.network)
        per_url[url] = _LoopState(client, AsyncCompletions(client, PREFIX))
    return per_url[url]


def _primary_client(url: str, settings: Settings) -> aioredis.Redis:
    """The async client of a ``sentinel://`` URL's primary (``suture.workers.store.connection`` for the
    sync one)."""
    from redis.asyncio.sentinel import Sentinel

    sentinels, worker = sentinels_of(settings), settings.worker
    if not sentinels.master_name:
        raise SentinelUrlError("a sentinel:// URL needs sentinel.master_name (SUTURE_SENTINEL__MASTER_NAME)")
    hosts, params = parse_sentinel_url(url)
    timeouts = connection_options(settings.network, worker.redis_timeout_s)
    timeouts.pop("health_check_interval")  # the sentinels' connections are short-lived queries
    to_sentinels = dict(timeouts, password=sentinels.password) if sentinels.password else dict(timeouts)
    manager = Sentinel(hosts, sentinel_kwargs=to_sentinels, **timeouts)
    return manager.master_for(
        sentinels.master_name,
        max_connections=worker.redis_pool_size,
        decode_responses=True,
        health_check_interval=settings.network.health_check_interval_s,
        **params,
    )


class AsyncJobHandle:
    """A job by id, for asyncio code: its status, its result (awaited), its events."""

    def __init__(self, job_id: str, settings: Settings) -> None:
        self.id = job_id
        self._settings = producer.resolved_settings(settings)  # settings already resolved stay as they are
        self._keys = Keys(PREFIX)

    def __repr__(self) -> str:
        return f"AsyncJobHandle({self.id!r})"

    async def status(self) -> str:
        """The job's status now; raises JobNotFound."""
        status = await _state(self._settings).client.hget(self._keys.job(self.id), "status")
        if status is None:
            raise JobNotFound(self.id)
        return str(status)

    async def result(self, timeout_s: float | None = None) -> dict[str, Any]:
        """Wait for the result (forever if ``timeout_s`` is None); raises JobTimeout or JobNotFound."""
        state = _state(self._settings)
        result = await state.completions.wait(self.id, self._read, timeout_s)
        if result is None:
            raise JobTimeout(self.id, timeout_s or 0.0)
        return result

    async def callback(self) -> dict[str, Any] | None:
        """The delivery of the job's latest callback, as ``JobHandle.callback`` gives it."""
        flags = await _state(self._settings).client.hgetall(self._keys.flags(self.id))
        return delivery_of({str(name): str(value) for name, value in flags.items()})  # decoded: str already

    async def events(self) -> AsyncIterator[dict[str, Any]]:
        """The job's events as they come, ending with ``delivered`` (at once if it already was)."""
        pubsub = _state(self._settings).client.pubsub()
        try:
            await pubsub.subscribe(self._keys.events(self.id))
            while True:
                result = await self._read()  # subscribed first: a delivery in between is not missed
                if result is not None:
                    yield {"type": "delivered", "job_id": self.id, "status": result.get("status")}
                    return
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=RECHECK_S)
                if message is None or message.get("type") != "message":
                    continue
                event = json.loads(message["data"])
                if event.get("type") != "delivered":  # the stored result says it, with its final status
                    yield event
        finally:
            await pubsub.aclose()

    async def _read(self) -> dict[str, Any] | None:
        status, raw = await _state(self._settings).client.hmget(self._keys.job(self.id), ["status", "result"])
        if status is None:
            raise JobNotFound(self.id)
        return json.loads(raw) if raw else None


async def enqueue(
    contract: str, input: str, *, settings: Settings | None = None, **options: Any
) -> AsyncJobHandle:
    """Enqueue a job as ``suture.enqueue`` does (same keywords, same errors); returns its async handle."""
    # Resolved once, here: the handle reads the store the job was published to (a running `suture up`'s
    # when nothing is configured), never another Redis.
    settings = await asyncio.to_thread(producer.resolved_settings, settings)
    handle = await asyncio.to_thread(producer.enqueue, contract, input, settings=settings, **options)
    return AsyncJobHandle(handle.id, settings)


async def get_job(
    job_id: str, settings: Settings | None = None, *, tenant: str | None = None, operator: bool = False
) -> AsyncJobHandle:
    """The handle of an existing job; raises JobNotFound (also, given ``tenant``, for a job it may not see,
    as ``suture.get_job``)."""
    handle = AsyncJobHandle(job_id, await asyncio.to_thread(producer.resolved_settings, settings))
    status, owner = await _state(handle._settings).client.hmget(
        handle._keys.job(job_id), ["status", "tenant"]
    )
    if status is None:
        raise JobNotFound(job_id)
    check_owner(job_id, str(owner) if owner else None, tenant, operator=operator)
    return handle


async def close() -> None:
    """End this event loop's subscription and close its connections (an ASGI app's shutdown)."""
    for state in _loops.pop(asyncio.get_running_loop(), {}).values():
        await state.completions.stop()
        await state.client.aclose()
        await state.client.connection_pool.disconnect()
