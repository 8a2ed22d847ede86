"""uvicorn's httptools protocol with ``connections``' read deadlines (imported only when httptools is)."""

from __future__ import annotations

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from suture.workers.api.connections import ReadDeadlines


class GuardedHttpToolsProtocol(ReadDeadlines, HttpToolsProtocol):
    """uvicorn's httptools protocol with read deadlines."""
