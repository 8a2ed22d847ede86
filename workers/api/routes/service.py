"""``GET /v1/stats`` (as ``suture stats``), ``GET /metrics`` (Prometheus) and ``GET /healthz`` (no auth:
are the store and broker up?)."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response

from suture.config.settings import Settings
from suture.workers.api.context import BEARER, api_caller, service
from suture.workers.api.problems import problem_responses
from suture.workers.api.schemas import Health, Stats
from suture.workers.runtime.metrics import render
from suture.workers.runtime.stats import service_stats
from suture.workers.store.job_store import get_store

router = APIRouter(tags=["service"])


@router.get(
    "/v1/stats",
    response_model=Stats,
    summary="Waiting messages and unfinished jobs",
    dependencies=[Depends(BEARER), Depends(api_caller)],
    responses=problem_responses(401, 429, 503),
)
def stats(request: Request) -> Stats:
    """Messages ready per queue (``null`` if the broker cannot be read) and unfinished / overdue jobs."""
    return Stats.model_validate(service_stats(service(request).settings))


@router.get("/metrics", include_in_schema=False, dependencies=[Depends(BEARER), Depends(api_caller)])
def metrics(request: Request) -> Response:
    """Prometheus text: this API process's series and the cluster's gauges (job counters: the workers')."""
    body, content_type = render(service(request).settings)
    return Response(body, media_type=content_type)


@router.get(
    "/healthz",
    response_model=Health,
    summary="Liveness: store and broker reachable",
    responses={503: {"model": Health, "description": "The store or the broker does not answer"}},
)
def health(request: Request) -> JSONResponse:
    """200 when the job store and the broker answer, else 503 saying which does not."""
    settings = service(request).settings
    store = _answers(lambda: get_store(settings).redis.ping())
    broker = _answers(lambda: _broker_ping(settings))
    ok = store and broker
    body = Health(
        status="ok" if ok else "unavailable",
        store="ok" if store else "unavailable",
        broker="ok" if broker else "unavailable",
    )
    return JSONResponse(body.model_dump(), status_code=200 if ok else 503)


def _broker_ping(settings: Settings) -> None:
    from suture.workers.runtime.app import app, configure

    configure(settings)
    with app.connection_for_write() as connection:
        connection.ensure_connection(max_retries=1, timeout=2)


def _answers(probe: Callable[[], object]) -> bool:
    try:
        probe()
    except Exception:  # any failure (Redis, kombu, OS) means "not answering"
        return False
    return True
