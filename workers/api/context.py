"""What every request of one API process shares: the settings, the keys, the rate limiter.

Kept on ``app.state.service``; ``api_caller`` and ``page_viewer`` are the FastAPI dependencies that
authenticate a request (and count it against its key's limit).
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request
from fastapi.security import HTTPBasic, HTTPBearer
from starlette.concurrency import run_in_threadpool

from suture.config.settings import Settings
from suture.workers.api.auth import ApiKeys, Caller
from suture.workers.api.ratelimit import RequestLimiter
from suture.workers.store.job_store import get_store

# Declared so the OpenAPI schema shows how to authenticate; the keys are checked by ApiKeys.
BEARER = HTTPBearer(auto_error=False, description="A key from api.keys")
BASIC = HTTPBasic(auto_error=False, description="Any user name, an API key as the password")


@dataclass
class Service:
    """One API process's shared state."""

    settings: Settings
    keys: ApiKeys
    limiter: RequestLimiter

    @classmethod
    def from_settings(cls, settings: Settings) -> Service:
        limiter = RequestLimiter(get_store(settings).redis, settings.api.rate_limit_per_minute)
        return cls(settings, ApiKeys(settings.api.keys), limiter)


def service(request: Request) -> Service:
    """The process's shared state."""
    found: Service = request.app.state.service
    return found


# Async, so FastAPI runs them on the event loop: a sync dependency costs a thread-pool hop per request.
async def api_caller(request: Request) -> Caller:
    """The API caller (bearer key), counted against its rate limit; 401 / 429 otherwise."""
    shared = service(request)
    caller = shared.keys.bearer(request)
    await _count(shared, caller)
    return caller


async def page_viewer(request: Request) -> Caller:
    """The review pages' caller (bearer or basic auth), counted against its rate limit."""
    shared = service(request)
    caller = shared.keys.viewer(request)
    await _count(shared, caller)
    return caller


async def _count(shared: Service, caller: Caller) -> None:
    if shared.limiter.enabled:  # one Redis round trip, off the event loop
        await run_in_threadpool(shared.limiter.check, caller.key_id)
