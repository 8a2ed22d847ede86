"""Read deadlines for ``suture serve``'s connections: a request head and a body must arrive in time.

uvicorn closes a keep-alive connection idle after a response (``timeout_keep_alive``) and caps open
connections (``limit_concurrency``), but it has no deadline for reading a request: a client that
sends half a head, or a byte of it every few seconds (slowloris), holds its connection for ever, and
its httptools parser (what uvicorn picks when installed) has no head size cap either. This module
adds, to whichever protocol uvicorn would pick:

- a **head deadline**: from the connection's start, or the end of the previous response, a whole
  request head must arrive within ``api.header_timeout_s``, else 408 and the connection is closed;
- a **head size cap**: a head still incomplete past ``api.max_header_bytes`` gets 431 and is closed;
- a **body deadline**: once the head is in, its body must arrive within ``api.body_timeout_s``,
  else the connection is closed (the route sees a disconnect); the same holds for the rest of a body
  answered before it was read (a 401 or 413), which uvicorn reads and drops.

The limits travel in ``ServerConfig`` (a ``uvicorn.Config`` that also holds them), which
``--workers N`` hands to each server process like any uvicorn config.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from suture.config.service_settings import ApiSettings

if TYPE_CHECKING:

    class _Base(asyncio.Protocol):
        """What the mixin uses of uvicorn's protocols (the h11 and httptools ones name it alike)."""

        cycle: Any
        transport: Any
        loop: Any

        def __init__(self, config: Any, *args: Any, **kwargs: Any) -> None: ...

        def on_response_complete(self) -> None: ...

else:
    _Base = object


@dataclass(frozen=True)
class ReadLimits:
    """How long a request head and body may take to arrive, and how large a head may grow."""

    header_timeout_s: float
    body_timeout_s: float
    max_header_bytes: int

    @classmethod
    def of(cls, api: ApiSettings) -> ReadLimits:
        """The limits the ``api`` settings give."""
        return cls(api.header_timeout_s, api.body_timeout_s, api.max_header_bytes)


class ServerConfig(uvicorn.Config):
    """A uvicorn config that also carries ``ReadLimits`` for the guarded protocol."""

    def __init__(self, app: Any, *, read_limits: ReadLimits, **options: Any) -> None:
        super().__init__(app, http=guarded_protocol(), **options)
        self.read_limits = read_limits


_REFUSED = {
    408: b"HTTP/1.1 408 Request Timeout\r\n",
    431: b"HTTP/1.1 431 Request Header Fields Too Large\r\n",
}


class ReadDeadlines(_Base):
    """The deadlines, as a mixin over uvicorn's h11 or httptools protocol (same attribute names)."""

    def __init__(self, config: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self._limits: ReadLimits = config.read_limits
        self._deadline: asyncio.TimerHandle | None = None
        # "head", "body", "drain" (the rest of an answered request's body), or "" (the app has the request)
        self._reading = "head"
        self._before: Any = None  # the request cycle before the head being read
        self._head_bytes = 0

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._await_head(None)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._reading == "head":
            self._head_bytes += len(data)
        super().data_received(data)
        self._progress()

    def on_response_complete(self) -> None:
        finished = self.cycle
        super().on_response_complete()
        if self.transport.is_closing():
            self._disarm()
            return
        if finished is not None and finished.more_body:
            # Answered before its body was read (401, 413): uvicorn reads the rest and drops it, so
            # the client can read the answer; those bytes are no head, but must end in time too.
            self._reading, self._before = "drain", finished
            self._arm(self._limits.body_timeout_s, self._drain_late)
        else:
            self._await_head(finished)
        self._progress()  # a pipelined request may already be in

    def _await_head(self, before: Any) -> None:
        self._reading, self._before, self._head_bytes = "head", before, 0
        self._arm(self._limits.header_timeout_s, self._head_late)

    def _progress(self) -> None:
        if self.transport.is_closing():
            return
        if self._reading in ("head", "drain"):
            if self.cycle is self._before:  # still no whole head (or still the answered request's body)
                if self._reading == "head" and self._head_bytes > self._limits.max_header_bytes:
                    self._refuse(431)
                return
            self._reading = "body"
            self._arm(self._limits.body_timeout_s, self._body_late)
        if self._reading == "body" and (not self.cycle.more_body or self.cycle.response_complete):
            self._reading = ""
            self._disarm()

    def _head_late(self) -> None:
        if self._reading == "head" and self.cycle is self._before:
            self._refuse(408)

    def _drain_late(self) -> None:
        if self._reading == "drain" and self.cycle is self._before:
            self.transport.close()

    def _body_late(self) -> None:
        if self._reading == "body" and self.cycle.more_body and not self.cycle.response_complete:
            self.transport.close()  # the route's receive() sees a disconnect

    def _refuse(self, status: int) -> None:
        self._disarm()
        if not self.transport.is_closing():
            headers = b"content-length: 0\r\nconnection: close\r\n\r\n"
            self.transport.write(_REFUSED[status] + headers)
            self.transport.close()

    def _arm(self, delay_s: float, then: Any) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(delay_s, then)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None


class GuardedH11Protocol(ReadDeadlines, H11Protocol):
    """uvicorn's h11 protocol with read deadlines."""


def guarded_protocol() -> type[asyncio.Protocol]:
    """The protocol uvicorn would pick (httptools when installed, else h11), with read deadlines."""
    try:
        from suture.workers.api.httptools_guard import GuardedHttpToolsProtocol
    except ImportError:
        return GuardedH11Protocol
    return GuardedHttpToolsProtocol
