"""The job store's errors, and the one place Redis failures become them (never showing a password).

Every store module (``suture.workers.store.job_store``, ``suture.workers.store.watchlist``) runs its Redis
calls through
``guarded``, so callers catch store errors only::

    StoreError
     ├── JobNotFound        (job_id)         unknown or expired job
     └── StoreUnavailable   (reason)         Redis cannot be reached (URL password never shown)

They are defined, and imported from, with the rest of the public API's errors
(``suture.workers.errors``: a ``StoreError`` is a ``ProducerError``); this module only raises them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis

from suture.config.redaction import redact
from suture.workers.errors import StoreUnavailable


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
    except OSError as exc:  # a socket failing under redis-py's own handling (EBADF, ...)
        raise StoreUnavailable(type(exc).__name__ + ": " + _first_line(exc)) from None
    except ValueError as exc:
        # In a Sentinel failover redis-py closes a pool's connections while another thread checks one out:
        # that thread's read then fails on the closed socket as Python's ValueError, not a ConnectionError
        # (seen in the graceful-failover test: an internal error where an outage was due). Only that
        # message is an outage; any other ValueError is a bug and stays one.
        if not str(exc).startswith("I/O operation on closed"):
            raise
        raise StoreUnavailable("connection closed while in use: " + _first_line(exc)) from None


def _first_line(exc: BaseException) -> str:
    return redact((str(exc).splitlines() or [type(exc).__name__])[0][:200])
