"""One callback POST, bounded: a total deadline, a response-size cap, no redirects, a pinned address.

``post(target, address, body, headers, deadline_s=..., max_response_bytes=...)`` is a coroutine run
by the courier's event loop. The deadline covers the whole exchange (connecting, TLS, sending, the
status line and every header, the body), not each read, so a receiver that drips one header line
every few seconds costs ``deadline_s`` and no more. The connection goes to ``address`` (checked by
``suture.workers.webhooks.targets``) whatever the host resolves to now; TLS still verifies the
certificate for the host name. Environment proxies are ignored (they would reach past the check).
"""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from suture.workers.webhooks.addresses import IPAddress
from suture.workers.webhooks.targets import Target

USER_AGENT = "suture-webhooks/1"


@dataclass(frozen=True)
class Exchange:
    """How one delivery went: the HTTP status (None if there was none) and the error, if any."""

    status: int | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """A 2xx answer: the receiver took the callback (Standard Webhooks' rule)."""
        return self.status is not None and 200 <= self.status < 300

    def describe(self) -> str:
        if self.error:
            return self.error
        return f"HTTP {self.status}"


class PinnedResolver(AbstractResolver):
    """Resolves the callback's host to the one address that was checked, and nothing else."""

    def __init__(self, host: str, address: IPAddress) -> None:
        self._host = host
        self._address = address

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[ResolveResult]:
        if host != self._host:  # a redirect is never followed, so no other host can come up
            raise OSError(f"unexpected host {host!r}")
        af = socket.AF_INET6 if self._address.version == 6 else socket.AF_INET
        return [
            ResolveResult(
                hostname=host,
                host=str(self._address),
                port=port,
                family=af,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
        ]

    async def close(self) -> None:
        return None


async def post(
    target: Target,
    address: IPAddress,
    body: str,
    headers: dict[str, str],
    *,
    deadline_s: float,
    max_response_bytes: int,
) -> Exchange:
    """POST ``body`` to ``target`` at ``address`` within ``deadline_s``; never raises for the network."""
    try:
        async with asyncio.timeout(deadline_s):
            return await _exchange(target, address, body, headers, deadline_s, max_response_bytes)
    except TimeoutError:
        return Exchange(None, f"no complete answer within {deadline_s:g} s")
    except (aiohttp.ClientError, OSError, ValueError) as exc:
        return Exchange(None, f"{type(exc).__name__}: {_first_line(exc)}")


async def _exchange(
    target: Target, address: IPAddress, body: str, headers: dict[str, str], deadline_s: float, cap: int
) -> Exchange:
    connector = aiohttp.TCPConnector(
        resolver=PinnedResolver(target.host, address), use_dns_cache=False, force_close=True, limit=1
    )
    timeout = aiohttp.ClientTimeout(total=deadline_s)
    async with (
        aiohttp.ClientSession(
            connector=connector, timeout=timeout, trust_env=False, headers={"user-agent": USER_AGENT}
        ) as session,
        session.post(
            target.url, data=body.encode("utf-8"), headers=headers, allow_redirects=False
        ) as response,
    ):
        await _read_capped(response, cap)
        return Exchange(response.status)


async def _read_capped(response: Any, cap: int) -> int:
    """Read at most ``cap`` bytes of the reply body (the rest is never read) and return how many."""
    read = 0
    while read < cap:
        chunk = await response.content.read(min(65536, cap - read))
        if not chunk:
            break
        read += len(chunk)
    return read


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [""])[0][:200]
