"""Why a job ended as it did: the cause an operator acts on, and the one-word ending Flower shows.

A ``failed`` job has one of the hard causes (what to fix: the API key, the request, the deadline, the
budget, the provider, the model's output, suture itself, or workers dying on the job); a
``soft_delivered`` job says why its chain stopped before the output was valid (``exhausted``: every
allowed step was tried). A ``delivered``, ``refused`` or ``cancelled`` job has no cause. The engine
decides the causes it can see (``suture.tasks.engine``); the worker side gives the others when it
gives a job up (``deadline``, ``internal``, ``worker_lost``). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

Cause = Literal[
    "auth",
    "bad_request",
    "deadline",
    "budget",
    "provider_unavailable",
    "invalid_output",
    "internal",
    "worker_lost",
    "exhausted",
]

# Causes a job can be given up for by the worker side (watchdog, poison cap, internal error).
GiveUpCause = Literal["deadline", "internal", "worker_lost"]

# Transport error kinds that end a job at once (suture.tasks.transitions.TERMINAL_ERRORS), by cause.
ERROR_CAUSES: dict[str, Cause] = {"auth": "auth", "bad_request": "bad_request", "not_found": "bad_request"}


def error_cause(kind: str | None) -> Cause:
    """The cause of a job ended by a terminal transport error of ``kind`` (401/403, 400, 404)."""
    return ERROR_CAUSES.get(kind or "", "bad_request")


def stop_cause(*, delivered: bool, budget: bool, outcomes: Sequence[str]) -> Cause:
    """The cause of a chain that stopped without a valid output.

    ``delivered``: a best output is soft-delivered; ``budget``: the cost budget stopped it;
    ``outcomes``: the current round's attempt outcomes (all transport errors: the provider was down).
    """
    if budget:
        return "budget"
    if delivered:
        return "exhausted"
    if outcomes and all(o == "transport_error" for o in outcomes):
        return "provider_unavailable"
    return "invalid_output"


def ending(result: Mapping[str, Any]) -> str:
    """How a job ended, in one word: its status, or ``failed:<cause>`` (what Flower's searches match)."""
    status = str(result.get("status"))
    if status == "failed":
        return f"failed:{result.get('cause') or 'unknown'}"
    return status
