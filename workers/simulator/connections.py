"""How long the simulator waits on a client: idle connections are closed, a slow body is refused.

A connection that sends no complete request head within ``idle_timeout_s`` (and a kept-alive one
idle that long between requests) is closed by aiohttp's keep-alive timer, so thousands of half-open
connections cost their file descriptors for seconds, not an hour (aiohttp's default). A request
body that does not arrive whole within ``read_timeout_s`` is answered 408, and the connection closed
once the answer is sent (``replies.error_reply``).
Settings: ``simulator.idle_timeout_s``, ``simulator.read_timeout_s``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from aiohttp import web

from suture.workers.simulator.errors import RequestRejected

IDLE_TIMEOUT_S = 15.0
READ_TIMEOUT_S = 30.0
T = TypeVar("T")


async def within(request: web.Request, timeout_s: float, reading: Awaitable[T]) -> T:
    """``reading`` (of ``request``'s body), refused with 408 if it takes longer than ``timeout_s``."""
    try:
        async with asyncio.timeout(timeout_s):
            return await reading
    except TimeoutError:
        message = f"The request body did not arrive within {timeout_s:g} s (suture simulator)."
        raise RequestRejected(408, "request_timeout", message) from None
