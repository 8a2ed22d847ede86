"""``/review``: the soft-delivered quizzes waiting for a person, each job's page, and its three actions.

Pages authenticate like the API (a bearer key) or with basic auth whose password is a key, so a
teacher can open them in a browser. Actions are HTML forms: each carries a token derived from the
caller's key and the job (``Caller.form_token``), and a cross-site request is refused, so another
site cannot make a logged-in browser accept or cancel a job. Accept is ``review.actions.accept``;
resume and cancel are the producer's, as everywhere else. The list reads the caller's own review list in
the store (and the operator's, for an operator key); a job enqueued without a tenant is shown to an
operator key without forms, as no key may act on it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from suture.workers import producer
from suture.workers.api.auth import Caller
from suture.workers.api.context import BASIC, page_viewer, service
from suture.workers.api.problems import ProblemError, problem_responses
from suture.workers.api.routes.jobs import JobId
from suture.workers.api.schemas import MAX_FEEDBACK_CHARS
from suture.workers.review.actions import CANCEL_REASON, accept, dismiss
from suture.workers.review.jobs import readable_job, record_view, waiting
from suture.workers.review.render import ActionForms, index_item, render_index, render_job
from suture.workers.store.job_store import get_store

router = APIRouter(prefix="/review", tags=["review"], dependencies=[Depends(BASIC)])
Viewer = Annotated[Caller, Depends(page_viewer)]
Token = Annotated[str, Form(min_length=1, max_length=64, description="The form token of the job's page")]
Notice = Literal["accepted", "resumed", "cancelled", "finished"]
NOTICES: dict[str, str] = {
    "accepted": "Accepted as is: the job is delivered, marked reviewed.",
    "resumed": "Resumed with your feedback: a new round is running; reload this page to follow it.",
    "cancelled": "Cancelled.",
    "finished": "The job had already finished; nothing changed.",
}
OPERATORS_JOB = (
    "Enqueued without a tenant (by the operator, e.g. `suture batch`): API keys only read it. Accept, resume "
    "or cancel it from the CLI, or with `suture review OUT` for a batch."
)
# The pages load nothing from anywhere and post only to themselves.
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
HTML: dict[str, Any] = {"content": {"text/html": {"schema": {"type": "string"}}}, "description": "The page"}
REDIRECT: dict[int | str, dict[str, Any]] = {
    303: {"description": "Back to the job's page", "headers": {"Location": {"schema": {"type": "string"}}}}
}


def _page(html: str) -> HTMLResponse:
    return HTMLResponse(html, headers=HEADERS)


@router.get(
    "",
    response_class=HTMLResponse,
    summary="Quizzes waiting for review",
    responses={200: HTML, **problem_responses(401, 429, 503)},
)
def review_index(request: Request, caller: Viewer) -> HTMLResponse:
    """The soft-delivered jobs waiting for a person, newest first."""
    jobs = waiting(get_store(service(request).settings), tenant=caller.tenant, operator=caller.operator)
    items = [index_item(w.view, f"/review/jobs/{w.view.job_id}", when=w.when) for w in jobs]
    html = render_index(
        "Quizzes waiting for review",
        items,
        intro="Soft-delivered: the retries ran out with failures left. Accept, resume with feedback, or "
        "cancel.",
        empty="No quiz is waiting for review.",
        simulated=any(w.view.simulated for w in jobs),
    )
    return _page(html)


@router.get(
    "/jobs/{job_id}",
    response_class=HTMLResponse,
    summary="A job's quiz, failures and repairs",
    responses={200: HTML, **problem_responses(401, 404, 422, 429, 503)},
)
def review_job(
    request: Request, job_id: JobId, caller: Viewer, notice: Annotated[Notice | None, Query()] = None
) -> HTMLResponse:
    """The quiz as a reader sees it, each remaining failure at its question, each question's history."""
    store = get_store(service(request).settings)
    record = readable_job(store, job_id, caller.tenant, operator=caller.operator)  # not the caller's: 404
    view = record_view(record)
    if view is None:
        pending = f"This job is {record.status}: no result yet. Reload later."
        return _page(render_index(f"Job {job_id}", [], empty=pending, notice=NOTICES.get(notice or "")))
    if record.tenant is None:  # the operator's (an operator key reads it): no key acts on it
        return _page(render_job(view, back="/review", notice=NOTICES.get(notice or "", OPERATORS_JOB)))
    base = f"/review/jobs/{job_id}"
    actions = ActionForms(
        accept=f"{base}/accept",
        resume=f"{base}/resume",
        cancel=f"{base}/cancel",
        token=caller.form_token(f"review:{job_id}"),
    )
    return _page(render_job(view, actions=actions, back="/review", notice=NOTICES.get(notice or "")))


@router.post(
    "/jobs/{job_id}/accept",
    status_code=303,
    summary="Accept a soft-delivered quiz as it is",
    responses={**REDIRECT, **problem_responses(401, 403, 404, 409, 413, 422, 429, 503)},
)
def review_accept(request: Request, job_id: JobId, caller: Viewer, token: Token) -> RedirectResponse:
    """The job becomes ``delivered`` with ``reviewed: true`` in its result."""
    _check_form(request, caller, job_id, token)
    accept(job_id, settings=service(request).settings, tenant=caller.tenant, operator=caller.operator)
    return _back(job_id, "accepted")


@router.post(
    "/jobs/{job_id}/resume",
    status_code=303,
    summary="Resume a soft-delivered job with feedback",
    responses={**REDIRECT, **problem_responses(401, 403, 404, 409, 413, 422, 429, 503)},
)
def review_resume(
    request: Request,
    job_id: JobId,
    caller: Viewer,
    token: Token,
    feedback: Annotated[str, Form(min_length=1, max_length=MAX_FEEDBACK_CHARS)],
) -> RedirectResponse:
    """Another round with the reviewer's feedback in every prompt (the producer's ``resume``)."""
    _check_form(request, caller, job_id, token)
    settings = service(request).settings
    producer.resume(job_id, feedback, settings=settings, tenant=caller.tenant, operator=caller.operator)
    return _back(job_id, "resumed")


@router.post(
    "/jobs/{job_id}/cancel",
    status_code=303,
    summary="Cancel a job from its page",
    responses={**REDIRECT, **problem_responses(401, 403, 404, 409, 413, 422, 429, 503)},
)
def review_cancel(request: Request, job_id: JobId, caller: Viewer, token: Token) -> RedirectResponse:
    """Cancel the job: a soft-delivered one becomes ``cancelled`` (its output withdrawn), an unfinished one
    stops."""
    _check_form(request, caller, job_id, token)
    settings = service(request).settings
    who: dict[str, Any] = {"tenant": caller.tenant, "operator": caller.operator}
    if producer.get_job(job_id, settings, **who).status() == "soft_delivered":
        dismiss(job_id, settings=settings, **who)
        return _back(job_id, "cancelled")
    cancelled = producer.cancel(job_id, CANCEL_REASON, settings=settings, **who)
    return _back(job_id, "cancelled" if cancelled else "finished")


def _back(job_id: str, notice: str) -> RedirectResponse:
    return RedirectResponse(f"/review/jobs/{job_id}?notice={notice}", status_code=303)


def _check_form(request: Request, caller: Caller, job_id: str, token: str) -> None:
    """403 unless the form came from this site's page of this job."""
    site = request.headers.get("sec-fetch-site")
    origin = request.headers.get("origin")
    cross = site == "cross-site" or (
        origin not in (None, "null") and urlsplit(origin).netloc != request.headers.get("host")
    )
    if cross or not caller.check_form_token(f"review:{job_id}", token):
        raise ProblemError(403, "forbidden", "the form did not come from this job's review page")
