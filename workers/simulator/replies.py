"""HTTP replies of the simulator: JSON bodies and OpenAI-shaped errors, every one labelled a simulation."""

from __future__ import annotations

import json
import secrets

from aiohttp import web

from suture.workers.simulator.errors import RequestRejected

SIMULATED_HEADERS = {"x-suture-simulated": "true"}


def request_id() -> str:
    """A fresh request id, as OpenAI's ``x-request-id`` header carries one."""
    return f"req_sim_{secrets.token_hex(8)}"


def json_reply(payload: object, headers: dict[str, str] | None = None) -> web.Response:
    """A 200 JSON reply with the simulation label and a request id."""
    extra = {**SIMULATED_HEADERS, "x-request-id": request_id(), **(headers or {})}
    return web.Response(text=json.dumps(payload), content_type="application/json", headers=extra)


def error_reply(exc: RequestRejected, headers: dict[str, str] | None = None) -> web.Response:
    """The error OpenAI's API would answer ``exc`` with."""
    response = json_reply(exc.body(), headers)
    response.set_status(exc.status)
    if exc.status == 408:  # a client too slow to send its body does not keep the connection
        response.force_close()
    return response
