"""Refuse a request with a body from a caller without a valid key, before any of the body is read.

An ASGI middleware: FastAPI reads and parses a declared body (``ResumeRequest``, review forms) before
it runs the route's dependencies, so a 9.5 MB body with no key was parsed before its 401 (issue 33).
Here a POST, PUT or PATCH to ``/v1/`` or ``/review/`` needs a known key in its headers first; the
routes still check who the caller is (this only decides whether a body is worth reading).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from suture.workers.api.auth import ApiKeys
from suture.workers.api.problems import PROBLEM_JSON, ProblemError

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


class AuthGate:
    """Wraps an ASGI app so an unauthenticated request's body is never read."""

    def __init__(self, app: ASGIApp, keys: ApiKeys) -> None:
        self.app = app
        self.keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or scope.get("method") not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        if not path.startswith(("/v1/", "/review/")):
            await self.app(scope, receive, send)
            return
        request = Request(scope)  # headers only: nothing is received
        try:
            self.keys.viewer(request) if path.startswith("/review/") else self.keys.bearer(request)
        except ProblemError as problem:
            await _refuse(problem, path, send)
            return
        await self.app(scope, receive, send)


async def _refuse(problem: ProblemError, path: str, send: Send) -> None:
    body = json.dumps(problem.body(path)).encode()
    headers: list[Any] = [
        (b"content-type", PROBLEM_JSON.encode()),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),  # the unread body is not drained
        *((k.lower().encode(), v.encode()) for k, v in problem.headers.items()),
    ]
    await send({"type": "http.response.start", "status": problem.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
