"""The local review app's gate: requests must name it by its address (Host), and forms come from its pages.

``suture review`` listens on ``listen.review_host`` (127.0.0.1 by default) with no login: its secret
path is the password. A web page the user visits could still reach it through DNS rebinding (a name
of the attacker's that resolves to 127.0.0.1 sends ``Host: attacker.example``) or post a form to it
(CSRF). So every request must carry ``Host: 127.0.0.1:PORT``, ``localhost:PORT`` or the configured
host with the port it listens on, else 421; and a POST whose ``Sec-Fetch-Site`` is not
``same-origin`` (or ``none``), or whose ``Origin`` is another origin, or ``null`` without the
browser's ``Sec-Fetch-Site: same-origin``, gets 403. A client that sends neither header (curl, a
script) is no browser acting for someone else, so it passes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from suture.config.listen_settings import LOOPBACK

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]
LOCAL_NAMES = (LOOPBACK, "localhost")


def allowed_hosts(configured: str, port: int) -> frozenset[str]:
    """The ``Host`` values that name the app: loopback, ``localhost`` and ``configured``, with ``port``."""
    names = {*LOCAL_NAMES, configured.lower()} - {"0.0.0.0", "::", ""}  # "every interface" is no name
    return frozenset(f"[{n}]:{port}" if ":" in n else f"{n}:{port}" for n in names)


class ReviewGuard:
    """ASGI middleware: 421 for a request naming another host, 403 for a POST from another site."""

    def __init__(self, app: ASGIApp, configured_host: str) -> None:
        self.app = app
        self.configured_host = configured_host

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        port = int((scope.get("server") or ("", 0))[1] or 0)
        hosts = allowed_hosts(self.configured_host, port)
        refusal = _refusal(scope["method"], headers, hosts)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, text = refusal
        body = f"{text}\n".encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"cache-control", b"no-store")],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _refusal(method: str, headers: dict[str, str], hosts: frozenset[str]) -> tuple[int, str] | None:
    if headers.get("host", "").lower() not in hosts:
        return 421, f"this review app answers only to {', '.join(sorted(hosts))} (Host header)"
    if method in ("GET", "HEAD", "OPTIONS"):
        return None
    origin, site = headers.get("origin"), headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return 403, "a form from another site is refused (Sec-Fetch-Site header)"
    # The pages send no referrer, so a browser posts their forms with "Origin: null"; it is taken
    # only with the browser's word that the form came from this origin (Sec-Fetch-Site).
    if origin == "null" and site != "same-origin":
        return 403, "a form from an opaque origin is refused (Origin header)"
    if origin not in (None, "null") and origin.lower() not in {f"http://{h}" for h in hosts}:
        return 403, "a form from another origin is refused (Origin header)"
    return None
