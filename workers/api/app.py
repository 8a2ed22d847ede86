"""The ASGI app of ``suture serve``: routes, problem handlers, the body limit, and its OpenAPI schema.

``create_app(settings)`` builds one app for one process; ``openapi.json`` describes every route,
body and error: both request bodies of ``POST /v1/jobs`` (JSON and multipart), and every error as
``application/problem+json`` with the ``Problem`` schema.
"""

from __future__ import annotations

import gc
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from suture.config.settings import Settings
from suture.contracts.registry import contract_names
from suture.workers.api.auth_gate import AuthGate
from suture.workers.api.body_limit import BodyLimit
from suture.workers.api.context import Service
from suture.workers.api.problems import PROBLEM_JSON, Problem, install_handlers
from suture.workers.api.routes import jobs, review
from suture.workers.api.routes import service as service_routes
from suture.workers.api.schemas import JobRequest, JobUpload

DESCRIPTION = """Enqueue contract-checked generation jobs (quizzes from course documents), follow them,
fetch their results and traces, and review the quizzes soft-delivered for a person to look at.
Authenticate with `Authorization: Bearer <key>` (keys from `api.keys`). Errors are RFC 9457
`application/problem+json` with a stable `code`. Callbacks are signed per Standard Webhooks."""


def create_app(settings: Settings) -> FastAPI:
    """The API for these settings (keys, limits, store and broker)."""
    app = FastAPI(
        title="suture",
        version="1",
        description=DESCRIPTION,
        docs_url=None,
        redoc_url=None,
        lifespan=_settled,
    )
    app.state.service = Service.from_settings(settings)
    install_handlers(app)
    app.include_router(jobs.router)
    app.include_router(service_routes.router)
    app.include_router(review.router)
    app.add_middleware(AuthGate, keys=app.state.service.keys)  # inside BodyLimit: a key before any body
    app.add_middleware(BodyLimit, max_bytes=settings.api.max_body_bytes)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


@asynccontextmanager
async def _settled(app: FastAPI) -> AsyncIterator[None]:
    """Load what the first enqueue would, then move everything alive to the collector's permanent
    generation: its full collections then walk only what requests allocate, not the app, its
    modules and schemas, so they pause each process for less (the p99 of docs/benchmarks.md)."""
    import suture.workers.producer  # noqa: F401  # the enqueue path and what it imports

    gc.collect()
    gc.freeze()
    yield


def from_environment() -> FastAPI:
    """The app for settings read from this process's environment (each of ``serve --workers N``):
    resolved as ``suture serve`` resolved them (configured, else the running ``suture up``)."""
    from suture.config.settings import load_settings
    from suture.workers.contract_sources import install_contracts
    from suture.workers.local.discovery import resolve

    return create_app(resolve(install_contracts(load_settings())))


def _openapi(app: FastAPI) -> dict[str, Any]:
    if app.openapi_schema:
        return app.openapi_schema
    schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for model in (JobRequest, JobUpload, Problem):
        definition = model.model_json_schema(ref_template="#/components/schemas/{model}")
        components.update(definition.pop("$defs", {}))
        components[model.__name__] = definition
    components["JobUpload"]["properties"]["file"] = {"type": "string", "format": "binary"}
    for body in ("JobRequest", "JobUpload"):  # every contract this process knows, its users' included
        components[body]["properties"]["contract"]["enum"] = list(contract_names())
    for name, body in components.items():
        if "properties" in body:
            _as_served(body, nullable=name != "JobUpload", request=name in REQUEST_BODIES)
    for path in schema["paths"].values():
        for operation in path.values():
            _problem_content(operation)
    for unused in ("HTTPValidationError", "ValidationError"):
        components.pop(unused, None)
    app.openapi_schema = schema
    return schema


# Bodies a client sends: an optional field with a default is still optional to send.
REQUEST_BODIES = frozenset({"JobRequest", "JobUpload", "ResumeRequest", "CancelRequest"})


def _as_served(body: dict[str, Any], *, nullable: bool, request: bool) -> None:
    """Optional fields as the server takes them: no ``default: null``, and in a request body no default
    at all but in words (openapi-typescript v7 makes a field with a default required); in a multipart
    form, where no field can be null (an empty or absent field is "not given"), no null."""
    for field in body["properties"].values():
        default = field.pop("default", None) if request else field.get("default", ...)
        if default is None:
            field.pop("default", None)
        elif request:
            said = f"Default: {json.dumps(default)}."
            field["description"] = (
                f"{field['description'].rstrip('.')}. {said}" if field.get("description") else said
            )
        variants = field.get("anyOf")
        if not nullable and variants and {"type": "null"} in variants:
            rest = [v for v in variants if v != {"type": "null"}]
            field.pop("anyOf")
            field.update(rest[0] if len(rest) == 1 else {"anyOf": rest})


def _problem_content(operation: dict[str, Any]) -> None:
    """Every error response is problem+json (FastAPI would document application/json)."""
    problem = {"schema": {"$ref": "#/components/schemas/Problem"}}
    for status, response in operation.get("responses", {}).items():
        if (status.isdigit() and int(status) >= 400 and status != "503") or _is_problem(response):
            response["content"] = {PROBLEM_JSON: problem}
        if status == "422":
            response["description"] = "Invalid request: the problem names the field"


def _is_problem(response: dict[str, Any]) -> bool:
    content = response.get("content", {})
    return any(c.get("schema", {}).get("$ref", "").endswith("/Problem") for c in content.values())
