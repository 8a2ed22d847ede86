"""Transport failures of a model call, classified: what kind of terminal error, and worth another try?

The model client's errors, one small hierarchy:

    ModelClientError                   base
    ├── TransportFailure(kind, detail, retryable, retry_after_s, rate_limited, headers)
    │                                  one failed try, classified; becomes the reply's error
    │                                  once it is terminal or retries are exhausted
    └── RateLimited(model, retry_after_s, headers)
                                       a 429 the caller asked to have raised, not slept on
                                       (``ModelClient.call(..., defer_rate_limits=True)``)
"""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import httpx2

if TYPE_CHECKING:
    import openai  # only for annotations: the caller that catches the error has imported it

ErrorKind = Literal["auth", "bad_request", "unavailable", "not_found"]
MAX_DETAIL_CHARS = 300


class ModelClientError(Exception):
    """Base of the model client's errors."""


@dataclass
class TransportFailure(ModelClientError):
    """One failed try: what kind of terminal error it would be, and whether to try again."""

    kind: ErrorKind
    detail: str
    retryable: bool
    retry_after_s: float | None = None
    rate_limited: bool = False  # a retryable 429: the provider's rate limit
    headers: dict[str, str] | None = None

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


@dataclass
class RateLimited(ModelClientError):
    """The provider answered 429 (rate limit) and the caller defers rather than waits in its thread."""

    model: str
    retry_after_s: float | None
    headers: dict[str, str]

    def __str__(self) -> str:
        after = "" if self.retry_after_s is None else f", retry after {self.retry_after_s:g} s"
        return f"model {self.model}: rate limited by the provider{after}"


def classify_status(exc: openai.APIStatusError) -> TransportFailure:
    """Which terminal kind an HTTP error is, and whether it is worth another try."""
    status = exc.status_code
    detail = f"HTTP {status}: {_server_message(exc)}"
    if status in (401, 403):
        return TransportFailure("auth", detail, False)
    if status == 404:
        return TransportFailure("not_found", detail, False)
    if status == 429 and _error_code(exc) == "insufficient_quota":
        return TransportFailure("unavailable", detail, False)
    if status in (408, 409, 429) or status >= 500:
        headers = exc.response.headers
        return TransportFailure(
            "unavailable", detail, True, retry_after_s(headers), status == 429, dict(headers)
        )
    return TransportFailure("bad_request", detail, False)


def retry_after_s(headers: httpx2.Headers) -> float | None:
    """The server's requested wait, from ``retry-after-ms`` or ``retry-after`` (seconds or a date)."""
    try:
        if "retry-after-ms" in headers:
            return float(headers["retry-after-ms"]) / 1000
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return float(value)
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    text = message if isinstance(message, str) else type(exc).__name__
    return " ".join(text.split())[:MAX_DETAIL_CHARS]


def _error_code(exc: openai.APIStatusError) -> str | None:
    body = exc.body
    error = body.get("error", body) if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else None
