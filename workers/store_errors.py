"""The job store's errors, and the one place Redis failures become them (never showing a password).

Every store module (``workers.store``, ``workers.store_watchlist``) runs its Redis calls through
``guarded``, so callers catch store errors only::

    StoreError
     ├── JobNotFound        (job_id)         unknown or expired job
     └── StoreUnavailable   (reason)         Redis cannot be reached (URL password never shown)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis


class StoreError(Exception):
    """Base of the job store's errors."""


class JobNotFound(StoreError):
    """The job id is unknown (never enqueued, or expired from Redis)."""

    def __init__(self, job_id: str) -> None:
        super().__init__(f"no such job: {job_id}")
        self.job_id = job_id


class StoreUnavailable(StoreError):
    """Redis could not be reached or refused the command; the message never contains a password."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"job store (Redis) unavailable: {reason}")
        self.reason = reason


def guarded(fn: Callable[[], Any]) -> Any:
    """Run one Redis call (a command, a pipeline, a script); its failures raise StoreUnavailable.

    Returns the reply as redis-py gives it (``Any``: the store parses every reply itself).
    """
    try:
        return fn()
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
        raise StoreUnavailable(type(exc).__name__ + ": " + _first_line(exc)) from None
    except redis.exceptions.ResponseError as exc:
        raise StoreUnavailable(_first_line(exc)) from None
    except redis.exceptions.AuthenticationError as exc:  # pragma: no cover - subclass of ConnectionError
        raise StoreUnavailable(_first_line(exc)) from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]
