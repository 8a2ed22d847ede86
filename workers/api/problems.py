"""RFC 9457 problem details: every error the API answers, with a stable ``type`` and ``code``.

``ProblemError`` is the one exception routes raise; ``ERROR_PROBLEMS`` is the one table that maps
the producer's, the store's and the document readers' errors to problems (adapt it there when
those hierarchies change). Handlers installed by ``install_handlers`` turn request validation
errors into 422 naming the field, and anything unexpected into a 500 that shows no internals.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from suture.workers.documents.errors import UnreadableDocument
from suture.workers.errors import (
    BrokerUnavailable,
    IdempotencyConflict,
    InvalidJob,
    JobNotFound,
    NotResumable,
    OperatorJob,
    StoreUnavailable,
)

log = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"
TYPE_PREFIX = "urn:suture:problem:"

TITLES: dict[str, str] = {
    "unauthorized": "Missing or wrong API key",
    "forbidden": "Not allowed",
    "not-found": "No such resource",
    "job-not-found": "No such job",
    "method-not-allowed": "Method not allowed",
    "payload-too-large": "Request body too large",
    "unsupported-media-type": "Unsupported media type",
    "invalid-request": "The request does not match its schema",
    "invalid-job": "The job cannot be enqueued as asked",
    "unreadable-document": "The uploaded document cannot be read",
    "idempotency-conflict": "Idempotency key used with a different request",
    "not-resumable": "The job is not waiting for review",
    "operator-job": "The job is the operator's: no API key acts on it",
    "job-finished": "The job has already finished",
    "rate-limited": "Too many requests",
    "store-unavailable": "Job store unavailable",
    "broker-unavailable": "Message broker unavailable",
    "internal": "Internal error",
}

# The one mapping from the errors of the producer API (and what it raises through) to problems,
# most specific first.
ERROR_PROBLEMS: list[tuple[type[Exception], int, str]] = [
    (IdempotencyConflict, 409, "idempotency-conflict"),
    (NotResumable, 409, "not-resumable"),
    (OperatorJob, 403, "operator-job"),
    (InvalidJob, 422, "invalid-job"),
    (UnreadableDocument, 422, "unreadable-document"),
    (JobNotFound, 404, "job-not-found"),
    (BrokerUnavailable, 503, "broker-unavailable"),
    (StoreUnavailable, 503, "store-unavailable"),
]
MAPPED: tuple[type[Exception], ...] = tuple(kind for kind, _, _ in ERROR_PROBLEMS)


class BodyTooLarge(Exception):
    """A request body went past ``api.max_body_bytes`` while it was being read."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(f"request body over {max_bytes} bytes")
        self.max_bytes = max_bytes


class FieldError(BaseModel):
    """One invalid field of a request."""

    field: str
    message: str


class Problem(BaseModel):
    """An error, as RFC 9457 problem details (``application/problem+json``)."""

    type: str = Field(description="A URI naming the kind of problem: urn:suture:problem:<code>")
    title: str
    status: int
    detail: str
    code: str = Field(description="The stable problem code (the end of `type`)")
    instance: str | None = Field(None, description="The request path")
    field: str | None = Field(None, description="The request field at fault, when one is")
    errors: list[FieldError] | None = None


class ProblemError(Exception):
    """An error answered as a problem; ``headers`` go out with it (WWW-Authenticate, Retry-After)."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        *,
        field: str | None = None,
        headers: dict[str, str] | None = None,
        errors: list[FieldError] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status, self.code, self.detail = status, code, detail
        self.field, self.headers, self.errors = field, headers or {}, errors

    def body(self, instance: str | None = None) -> dict[str, Any]:
        problem = Problem(
            type=TYPE_PREFIX + self.code,
            title=TITLES.get(self.code, self.code),
            status=self.status,
            detail=self.detail,
            code=self.code,
            instance=instance,
            field=self.field,
            errors=self.errors,
        )
        return problem.model_dump(exclude_none=True)


DESCRIPTIONS: dict[int, str] = {
    401: "Missing or wrong API key",
    403: "The form token or origin is not this site's, or the job was enqueued without a tenant (only read)",
    404: "No such job",
    409: "Conflict: an idempotency key with another request, or a job not in the state the action needs",
    413: "Request body over api.max_body_bytes",
    415: "Not application/json or multipart/form-data",
    422: "Invalid request: the problem names the field",
    429: "Over the key's request rate; see Retry-After",
    503: "The job store or the broker is unavailable",
}
HEADERS: dict[int, dict[str, Any]] = {
    401: {"WWW-Authenticate": {"description": "How to authenticate", "schema": {"type": "string"}}},
    429: {"Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer"}}},
}


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses`` entries of these error statuses (problem+json bodies)."""
    return {
        status: {"model": Problem, "description": DESCRIPTIONS[status], "headers": HEADERS.get(status, {})}
        for status in statuses
    }


def problem_for(exc: Exception) -> ProblemError:
    """The problem a producer, store or reader error is answered with (500 if it is not in the table)."""
    if isinstance(exc, ProblemError):
        return exc
    for kind, status, code in ERROR_PROBLEMS:
        if isinstance(exc, kind):
            field = getattr(exc, "field", None) or ("file" if isinstance(exc, UnreadableDocument) else None)
            return ProblemError(status, code, _detail(exc), field=field)
    return ProblemError(500, "internal", "internal error; the server log has the details")


def too_large(max_bytes: int) -> ProblemError:
    """The 413 for a body over the limit."""
    return ProblemError(
        413, "payload-too-large", f"the request body is over api.max_body_bytes={max_bytes} bytes"
    )


def respond(problem: ProblemError, instance: str | None = None) -> JSONResponse:
    """The problem as a response."""
    return JSONResponse(
        problem.body(instance), status_code=problem.status, media_type=PROBLEM_JSON, headers=problem.headers
    )


MAX_LISTED_ERRORS = 20  # a body with 800k unknown keys is answered with 20 of them and a count
_MAX_MESSAGE_CHARS = 200
_MAX_FIELD_CHARS = 100


def validation_problem(errors: list[Any], *, prefix: tuple[str, ...] = ("body",)) -> ProblemError:
    """A 422 naming the first invalid field (pydantic error locations, without ``body``/``query``).

    At most ``MAX_LISTED_ERRORS`` are listed, each cut short, and the detail says how many there were:
    the problem body stays a few KB whatever the request (issue 33: one per unknown key made 50 MB).
    """
    fields = [
        FieldError(
            field=_field_name(err.get("loc", ()), prefix)[:_MAX_FIELD_CHARS],
            message=str(err.get("msg", "invalid"))[:_MAX_MESSAGE_CHARS],
        )
        for err in errors[:MAX_LISTED_ERRORS]
    ]
    first = fields[0] if fields else FieldError(field="body", message="invalid request")
    detail = f"{first.field}: {first.message}"
    if len(errors) > MAX_LISTED_ERRORS:
        detail += f" ({len(errors):,} errors; the first {MAX_LISTED_ERRORS} are listed)"
    return ProblemError(422, "invalid-request", detail, field=first.field, errors=fields)


def install_handlers(app: FastAPI) -> None:
    """Answer every error as a problem."""

    @app.exception_handler(ProblemError)
    async def _problem(request: Request, exc: ProblemError) -> JSONResponse:
        return respond(exc, request.url.path)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return respond(validation_problem(list(exc.errors())), request.url.path)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400:  # a body FastAPI could not parse (not JSON, not UTF-8): as any bad body
            bad_body = ProblemError(422, "invalid-request", f"body: {exc.detail}", field="body")
            return respond(bad_body, request.url.path)
        code = {404: "not-found", 405: "method-not-allowed", 413: "payload-too-large"}.get(
            exc.status_code, "invalid-request"
        )
        headers = dict(exc.headers or {})
        return respond(
            ProblemError(exc.status_code, code, str(exc.detail), headers=headers), request.url.path
        )

    @app.exception_handler(BodyTooLarge)
    async def _too_large(request: Request, exc: BodyTooLarge) -> JSONResponse:
        response = respond(too_large(exc.max_bytes), request.url.path)
        response.headers["connection"] = "close"  # the rest of the body is never read
        return response

    for kind in MAPPED:
        app.add_exception_handler(kind, _mapped)

    @app.exception_handler(ClientDisconnect)
    async def _gone(request: Request, exc: ClientDisconnect) -> Response:
        # The client left, or its body was too slow (api.body_timeout_s): no one reads an answer.
        log.info("client gone before its body was read: %s %s", request.method, request.url.path)
        return Response(status_code=408)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("internal error on %s %s", request.method, request.url.path)
        return respond(problem_for(exc), request.url.path)


async def _mapped(request: Request, exc: Exception) -> JSONResponse:
    return respond(problem_for(exc), request.url.path)


def _field_name(loc: Any, prefix: tuple[str, ...]) -> str:
    parts = [str(p) for p in loc]
    while parts and parts[0] in (*prefix, "query", "path", "header"):
        parts = parts[1:]
    return ".".join(parts) or "body"


def _detail(exc: Exception) -> str:
    return " ".join(str(exc).split())[:1000]
