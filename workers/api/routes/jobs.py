"""``/v1/jobs``: enqueue (JSON or a multipart upload), poll, result, trace, cancel, resume.

Every route calls the producer API (``suture.workers.producer``), as the CLI does; its blocking
Redis calls run in the server's thread pool. Errors are problems (``suture.workers.api.problems``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Path, Request, Response
from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from suture.config.settings import Settings
from suture.tasks.dispatch_order import PriorityClass
from suture.workers import producer
from suture.workers.api.auth import Caller
from suture.workers.api.context import BEARER, api_caller, service
from suture.workers.api.problems import ProblemError, problem_responses, validation_problem
from suture.workers.api.schemas import (
    JOB_ID_PATTERN,
    CallbackDelivery,
    Cancelled,
    CancelRequest,
    JobAccepted,
    JobRequest,
    JobView,
    ResumeRequest,
    TraceView,
)
from suture.workers.api.uploads import upload_text

router = APIRouter(prefix="/v1", tags=["jobs"], dependencies=[Depends(BEARER), Depends(api_caller)])
JobId = Annotated[str, Path(pattern=JOB_ID_PATTERN, description="A job id (32 hex characters)")]
ApiCaller = Annotated[Caller, Depends(api_caller)]  # the router's own check, cached per request
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        max_length=255,
        description="The same key with the same request returns the same job; with another request: 409",
    ),
]
MULTIPART_FIELDS = ("contract", "questions", "policy", "callback", "priority")
LOCATION = {"Location": {"description": "The job's URL", "schema": {"type": "string"}}}
JOB_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/JobRequest"}},
            "multipart/form-data": {"schema": {"$ref": "#/components/schemas/JobUpload"}},
        },
    }
}


class _UploadFields(BaseModel):
    """The form fields beside the file, validated as JobRequest validates them."""

    contract: str = "quiz"
    questions: int | None = None
    policy: str | None = None
    callback: str | None = None
    priority: PriorityClass = "interactive"


@router.post(
    "/jobs",
    status_code=202,
    response_model=JobAccepted,
    summary="Enqueue a job",
    responses={202: {"headers": LOCATION}, **problem_responses(401, 409, 413, 415, 422, 429, 503)},
    openapi_extra=JOB_BODY,
)
async def create_job(
    request: Request, response: Response, caller: ApiCaller, idempotency_key: IdempotencyKey = None
) -> JobAccepted:
    """Enqueue a job from a JSON body or a multipart upload (``file``: .md, .txt or .pdf); the job
    belongs to the caller's key (its tenant): another key's idempotency key never names it."""
    settings = service(request).settings
    fields = await _job_fields(request)
    job_id, status = await run_in_threadpool(_enqueue, fields, idempotency_key, caller.tenant, settings)
    response.headers["Location"] = f"/v1/jobs/{job_id}"
    return JobAccepted(job_id=job_id, status=status)


def _enqueue(fields: JobRequest, key: str | None, tenant: str, settings: Settings) -> tuple[str, Any]:
    """Enqueue through the producer API and read the job's status, in one trip to the thread pool."""
    handle = producer.enqueue(
        fields.contract,
        fields.input,
        questions=fields.questions,
        params=fields.knobs(),
        policy=fields.policy,
        callback=fields.callback,
        idempotency_key=key,
        tenant=tenant,
        priority=fields.priority,
        settings=settings,
    )
    return handle.id, handle.status()


async def _job_fields(request: Request) -> JobRequest:
    kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if kind == "application/json":
        # Parsed and judged in the thread pool: a 10 MB body of 800k keys must not stall other requests
        return await run_in_threadpool(_parse_job_json, await request.body())
    if kind == "multipart/form-data":
        return await _upload_fields(request)
    raise ProblemError(415, "unsupported-media-type", "send application/json or multipart/form-data")


MAX_JSON_KEYS = 256  # a job request has a dozen fields; past this a body is refused unparsed


def _count_keys(raw: bytes) -> int:
    """How many object keys a JSON body holds, counted without parsing it (a few ms for 10 MB).

    Inside a JSON string a quote is always escaped, so an unescaped ``":`` ends a key; text holding
    ``\\":`` counts at most once more, never less.
    """
    return raw.count(b'":') + raw.count(b'" :') - raw.count(b'\\":')


def _parse_job_json(raw: bytes) -> JobRequest:
    keys = _count_keys(raw)
    if keys > MAX_JSON_KEYS:  # 800k unknown keys took 0.9 s to judge and 5 s to list, holding the GIL
        detail = f"body: {keys:,} keys, over {MAX_JSON_KEYS}; a job request has a few fields"
        raise ProblemError(422, "invalid-request", detail, field="body")
    try:
        return JobRequest.model_validate_json(raw)
    except ValidationError as exc:
        raise validation_problem(exc.errors(include_url=False, include_input=False), prefix=()) from None


async def _upload_fields(request: Request) -> JobRequest:
    settings = service(request).settings
    try:
        form = await request.form(max_files=1, max_fields=len(MULTIPART_FIELDS) + 1)
    except HTTPException as exc:  # malformed multipart, too many parts: Starlette says 400
        raise ProblemError(422, "invalid-request", f"body: {exc.detail}", field="body") from None
    try:
        upload = form.get("file")
        if upload is None or isinstance(upload, str):
            raise ProblemError(422, "invalid-request", "file: an uploaded document is required", field="file")
        raw = {k: v for k in MULTIPART_FIELDS if isinstance(v := form.get(k), str) and v != ""}
        try:
            extra = _UploadFields.model_validate(raw)
            text = await run_in_threadpool(upload_text, upload, settings.batch)
            return JobRequest(input=text, **extra.model_dump())
        except ValidationError as exc:
            raise validation_problem(list(exc.errors()), prefix=()) from None
    finally:
        await form.close()


@router.get(
    "/jobs/{job_id}",
    response_model=JobView,
    summary="A job's status and result",
    responses=problem_responses(401, 404, 422, 429, 503),
)
def read_job(request: Request, job_id: JobId, caller: ApiCaller) -> JobView:
    """The job's status, and its result once finished (the same keys as ``suture result``); another
    key's job is a 404, as if it did not exist (so is one enqueued without a tenant, unless the key is an
    operator key)."""
    handle = producer.get_job(
        job_id, service(request).settings, tenant=caller.tenant, operator=caller.operator
    )
    status = handle.status()
    result = handle.result(timeout_s=0) if status in _FINAL else None
    callback = handle.callback()
    delivery = CallbackDelivery.model_validate(callback) if callback else None
    return JobView(job_id=job_id, status=status, result=result, callback=delivery)


@router.get(
    "/jobs/{job_id}/trace",
    response_model=TraceView,
    summary="Every attempt of a job",
    responses=problem_responses(401, 404, 422, 429, 503),
)
def read_trace(request: Request, job_id: JobId, caller: ApiCaller) -> TraceView:
    """Every attempt so far, across resumes, oldest first (as ``suture trace``); another key's job: 404."""
    handle = producer.get_job(
        job_id, service(request).settings, tenant=caller.tenant, operator=caller.operator
    )
    return TraceView(job_id=job_id, attempts=handle.trace())


@router.post(
    "/jobs/{job_id}/cancel",
    response_model=Cancelled,
    summary="Cancel a job",
    responses=problem_responses(401, 403, 404, 409, 413, 422, 429, 503),
)
def cancel_job(
    request: Request, job_id: JobId, caller: ApiCaller, body: CancelRequest | None = None
) -> Cancelled:
    """Stop a job that has not finished (its result is stored now, status ``cancelled``); 409 if it had;
    another key's job: 404; a job enqueued without a tenant: 404, or 403 to an operator key."""
    settings = service(request).settings
    reason = (body.reason if body else None) or producer.CANCEL_REASON
    if not producer.cancel(job_id, reason, settings=settings, tenant=caller.tenant, operator=caller.operator):
        status = producer.get_job(job_id, settings).status()
        raise ProblemError(
            409, "job-finished", f"job {job_id} had already finished ({status}); nothing changed"
        )
    return Cancelled(job_id=job_id)


@router.post(
    "/jobs/{job_id}/resume",
    status_code=202,
    response_model=JobAccepted,
    summary="Resume a soft-delivered job with feedback",
    responses={202: {"headers": LOCATION}, **problem_responses(401, 403, 404, 409, 413, 422, 429, 503)},
)
def resume_job(
    request: Request, response: Response, job_id: JobId, caller: ApiCaller, body: ResumeRequest
) -> JobAccepted:
    """Re-run a soft-delivered job with a person's feedback and a fresh retry budget (history kept);
    ``targets`` (JSON Pointers) regenerates only those parts, ``callback`` replaces the job's callback;
    another key's job: 404; a job enqueued without a tenant: 404, or 403 to an operator key."""
    handle = producer.resume(
        job_id,
        body.feedback,
        targets=body.targets,
        callback=body.callback,
        settings=service(request).settings,
        tenant=caller.tenant,
        operator=caller.operator,
    )
    response.headers["Location"] = f"/v1/jobs/{handle.id}"
    return JobAccepted(job_id=handle.id, status="queued")


_FINAL: frozenset[str] = frozenset({"delivered", "soft_delivered", "refused", "failed", "cancelled"})
__all__: list[Any] = ["router"]
