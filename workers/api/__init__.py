"""``suture serve``: the HTTP API web apps in any language enqueue through, and the review pages.

An ASGI app (FastAPI, served by uvicorn) over the same producer API as the CLI: no second code
path. Modules: ``app`` (the app and its OpenAPI), ``routes/jobs`` (``/v1/jobs``...), ``routes/service``
(``/v1/stats``, ``/healthz``), ``routes/review`` (``/review`` pages and actions), ``schemas`` (request
and response bodies), ``problems`` (RFC 9457 errors and the one table mapping producer errors to
them), ``auth`` (bearer keys, basic auth for the pages, form tokens), ``ratelimit`` (per key, shared
through Redis), ``body_limit`` (413 before a body is read whole) and ``uploads`` (multipart documents
read by the batch's readers). Errors raised to callers are ``problems.ProblemError`` only.
"""

from __future__ import annotations

from suture.workers.api.app import create_app

__all__ = ["create_app"]
