"""OpenAI's Batch API, simulated: batch objects, their statuses, and the registry that runs them.

A batch moves ``validating`` -> ``in_progress`` -> ``finalizing`` -> ``completed``, or to
``failed`` (its input file is invalid), ``expired`` (its window ran out with some lines done), or
``cancelling`` -> ``cancelled``; the object has OpenAI's fields (``request_counts``,
``output_file_id``, ``error_file_id``, ``errors``, ``usage``, one ``*_at`` timestamp per status).
How a batch is run is ``batch_runner``'s concern. State lives in memory for the server's lifetime
(a restarted simulator knows no batches, unless it was given a file to keep them in: ``batch_state``)
and is bounded: at most ``BatchOptions.max_batches``
batch objects, each input file within the file store's caps.

Knobs (``BatchOptions``): ``delay_s`` (wall-clock seconds from ``in_progress`` to the end; the
latency scale does not apply), ``expire_rate`` (the share of batches that expire, drawn per
occurrence of the input file from the seed), ``line_error_rate`` (the share of lines answered with
a 500 in the error file), and the ``suture_simulate: expire`` metadata entry, which makes that one
batch expire.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from suture.workers.simulator.errors import RequestRejected

ENDPOINT = "/v1/chat/completions"
COMPLETION_WINDOW_S = 24 * 3600
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
SIMULATE_KEY = "suture_simulate"  # metadata entry that scripts one batch ("expire")


@dataclass(frozen=True)
class BatchOptions:
    """How simulated batches behave."""

    delay_s: float = 5.0
    expire_rate: float = 0.0
    line_error_rate: float = 0.0
    max_batches: int = 10_000

    def __post_init__(self) -> None:
        if self.delay_s < 0 or not 0 <= self.expire_rate <= 1 or not 0 <= self.line_error_rate <= 1:
            raise ValueError(f"unusable batch options: {self}")


@dataclass
class Batch:
    """One batch's state, mutated only on the server's event loop."""

    id: str
    input_file_id: str
    metadata: dict[str, str] | None
    created_at: int
    status: str = "validating"
    times: dict[str, int] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)
    usage: Counter[str] = field(default_factory=Counter)
    model: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: list[dict[str, Any]] | None = None
    cancel_requested: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    def move(self, status: str) -> None:
        """Enter ``status`` and stamp its ``<status>_at`` time."""
        self.status = status
        if status != "validating":
            self.times[f"{status}_at"] = int(time.time())

    def object(self) -> dict[str, Any]:
        """The ``Batch`` object exactly as OpenAI's API returns it."""
        stamps = ("in_progress", "finalizing", "completed", "failed", "expired", "cancelling", "cancelled")
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": ENDPOINT,
            "model": self.model,
            "errors": None if self.errors is None else {"object": "list", "data": self.errors},
            "input_file_id": self.input_file_id,
            "completion_window": "24h",
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": self.created_at,
            "expires_at": self.created_at + COMPLETION_WINDOW_S,
            **{f"{s}_at": self.times.get(f"{s}_at") for s in stamps},
            "request_counts": {k: self.counts[k] for k in ("total", "completed", "failed")},
            "usage": self._usage(),
            "metadata": self.metadata,
        }

    def _usage(self) -> dict[str, Any]:
        u = self.usage
        return {
            "input_tokens": u["input_tokens"],
            "input_tokens_details": {"cached_tokens": u["cached_tokens"]},
            "output_tokens": u["output_tokens"],
            "output_tokens_details": {"reasoning_tokens": u["reasoning_tokens"]},
            "total_tokens": u["input_tokens"] + u["output_tokens"],
        }


def check_create(params: Any) -> tuple[str, dict[str, str] | None]:
    """The input file id and metadata of a ``POST /v1/batches`` body, or the 400 OpenAI answers."""
    if not isinstance(params, dict):
        raise RequestRejected(400, None, "The request body must be a JSON object.")
    for name in ("input_file_id", "endpoint", "completion_window"):
        if not isinstance(params.get(name), str):
            raise RequestRejected(400, None, f"Missing required parameter: '{name}'.", param=name)
    if params["endpoint"] != ENDPOINT:
        message = f"The suture simulator runs batches for {ENDPOINT} only, got {params['endpoint']!r}."
        raise RequestRejected(400, None, message, param="endpoint")
    if params["completion_window"] != "24h":
        message = "Invalid value for 'completion_window': supported values are: '24h'."
        raise RequestRejected(400, None, message, param="completion_window")
    return params["input_file_id"], _metadata(params.get("metadata"))


def _metadata(value: Any) -> dict[str, str] | None:
    if value is None:
        return None
    ok = (
        isinstance(value, dict)
        and len(value) <= 16
        and all(isinstance(k, str) and len(k) <= 64 for k in value)
        and all(isinstance(v, str) and len(v) <= 512 for v in value.values())
    )
    if not ok:
        message = (
            "Invalid 'metadata': at most 16 string pairs, keys up to 64 and values up to 512 characters."
        )
        raise RequestRejected(400, None, message, param="metadata")
    return dict(value)


def new_batch(input_file_id: str, metadata: dict[str, str] | None) -> Batch:
    """A freshly created batch, ``validating``."""
    return Batch(f"batch_{secrets.token_hex(12)}", input_file_id, metadata, int(time.time()))
