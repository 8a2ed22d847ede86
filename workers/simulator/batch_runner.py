"""Running one simulated batch: validate its file, answer its lines over the delay, write its results.

Timing (``BatchOptions.delay_s`` = D, wall clock): the input file is validated at once (off the
event loop); then line k of n is answered at ``in_progress_at + D * k / n``, so
``request_counts`` grow through the delay and the batch ends at ``in_progress_at + D``. A batch
that expires answers the lines due in the first half of its window and then, at D, is
``expired``. A cancel stops before the next line. A change of ``options`` (a test's or an
operator's, e.g. a shorter delay) applies to the lines still waiting within half a second. Lines
are answered by the same ``Responder`` as online requests (same answers, bias and chaos draws; no
latency, no rate limits: OpenAI's Batch API has its own limits and does not use the online ones).

Output lines are ``{"id": "batch_req_...", "custom_id", "response": {"status_code": 200,
"request_id", "body": <chat.completion>}, "error": null}``; a line the endpoint refuses (400/404)
or that failed (500: a chaos transport fault or a ``line_error_rate`` draw) goes to the error
file with its status and OpenAI error body; a line never run gets ``"response": null, "error":
{"code": "batch_expired" | "batch_cancelled", "message": ...}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from suture.workers.jsonl import dumps_line
from suture.workers.simulator.batch_input import BatchLine, batch_error, read_input
from suture.workers.simulator.batches import ENDPOINT, SIMULATE_KEY, Batch, BatchOptions
from suture.workers.simulator.completion import body
from suture.workers.simulator.errors import RequestRejected
from suture.workers.simulator.files import FileStore
from suture.workers.simulator.replies import request_id
from suture.workers.simulator.request import parse_request
from suture.workers.simulator.responder import Responder

_YIELD_EVERY = 16  # lines answered between two yields to the event loop when behind schedule
_RECHECK_S = 0.5  # how often a waiting line reads its deadline again (options may change meanwhile)
_NOT_RUN = {
    "expired": ("batch_expired", "This request could not be executed before the completion window expired."),
    "cancelled": ("batch_cancelled", "This request was not executed because the batch was cancelled."),
}
_SERVER_ERROR = RequestRejected(
    500,
    None,
    "The server had an error processing this request (simulated by the suture simulator).",
    error_type="server_error",
)


@dataclass(frozen=True)
class LineResult:
    """One line of the output (``ok``) or error file, as JSON text."""

    ok: bool
    text: str


class BatchRunner:
    """Runs batches against one responder and file store."""

    def __init__(
        self, responder: Responder, files: FileStore, models: tuple[str, ...], options: BatchOptions
    ):
        self.responder = responder
        self.files = files
        self.models = models
        self.options = options

    async def run(self, batch: Batch) -> None:
        """Take ``batch`` from ``validating`` to a terminal status."""
        try:
            content = self.files.get(batch.input_file_id).content
        except RequestRejected as exc:  # deleted after the batch was created
            batch.errors = [batch_error("invalid_file", exc.message, param="input_file_id")]
            batch.move("failed")
            return
        parsed = await asyncio.to_thread(read_input, content, ENDPOINT)
        if batch.status == "cancelling":
            batch.counts["total"] = len(parsed.lines)
            self._finish(batch, [], parsed.lines, "cancelled")
            return
        if parsed.errors:
            batch.errors = parsed.errors
            batch.move("failed")
            return
        batch.model = parsed.model
        batch.counts["total"] = len(parsed.lines)
        batch.move("in_progress")
        started = time.monotonic()
        expires = self._expires(batch, content)
        due = parsed.lines[: len(parsed.lines) // 2] if expires else parsed.lines
        results = await self._answer(batch, due, started, len(parsed.lines))
        if batch.status == "in_progress" and expires:
            await _wait(batch, lambda: started + self.options.delay_s)
        end = "cancelled" if batch.status == "cancelling" else "expired" if expires else "completed"
        self._finish(batch, results, parsed.lines[len(results) :], end)

    def _expires(self, batch: Batch, content: bytes) -> bool:
        if (batch.metadata or {}).get(SIMULATE_KEY) == "expire":
            return True
        rate = self.options.expire_rate
        return rate > 0 and self.responder.draw("batch-expiry", content) < rate

    async def _answer(
        self, batch: Batch, lines: list[BatchLine], started: float, total: int
    ) -> list[LineResult]:
        """Answer ``lines`` in order, line k of ``total`` not before ``started + delay * k / total``."""
        results: list[LineResult] = []
        for index, line in enumerate(lines):

            def until(index: int = index) -> float:
                return started + self.options.delay_s * index / total

            if until() > time.monotonic() or index % _YIELD_EVERY == 0:
                await _wait(batch, until)
            if batch.status != "in_progress":
                break
            result = self._line(batch, line)
            batch.counts["completed" if result.ok else "failed"] += 1
            results.append(result)
        return results

    def _line(self, batch: Batch, line: BatchLine) -> LineResult:
        try:
            chat = parse_request(json.dumps(line.body).encode(), self.models)
        except RequestRejected as exc:
            return _result(line, exc.status, exc.body())
        outcome = self.responder.respond(chat, extra_failure_rate=self.options.line_error_rate)
        completion = outcome.completion
        if completion is None:
            return _result(line, _SERVER_ERROR.status, _SERVER_ERROR.body())
        batch.usage.update(
            input_tokens=completion.prompt_tokens,
            cached_tokens=completion.cached_tokens,
            output_tokens=completion.completion_tokens,
            reasoning_tokens=completion.reasoning_tokens,
        )
        return _result(line, 200, body(chat, completion))

    def _finish(self, batch: Batch, results: list[LineResult], unrun: list[BatchLine], end: str) -> None:
        if end == "completed":
            batch.move("finalizing")
        if unrun:
            code, message = _NOT_RUN[end]
            error = {"code": code, "message": message}
            results = results + [LineResult(False, _line_json(line, None, error)) for line in unrun]
            batch.counts["failed"] += len(unrun)
        output = [r.text for r in results if r.ok]
        errors = [r.text for r in results if not r.ok]
        if output:
            batch.output_file_id = self._write(batch, "output", output)
        if errors:
            batch.error_file_id = self._write(batch, "error", errors)
        batch.move(end)

    def _write(self, batch: Batch, kind: str, lines: list[str]) -> str:
        content = ("\n".join(lines) + "\n").encode()
        return self.files.write(f"batch_{batch.id}_{kind}.jsonl", "batch_output", content).id


async def _wait(batch: Batch, until: Callable[[], float]) -> None:
    """Sleep until ``until()`` (monotonic), or less if the batch is cancelled meanwhile; always yields.

    The deadline is read again every ``_RECHECK_S``, so a shorter ``delay_s`` set while a batch runs
    ends its wait without a restart.
    """
    await asyncio.sleep(0)
    while (timeout := until() - time.monotonic()) > 0 and not batch.cancel_requested.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(batch.cancel_requested.wait(), min(timeout, _RECHECK_S))


def _result(line: BatchLine, status: int, payload: dict[str, Any]) -> LineResult:
    response = {"status_code": status, "request_id": request_id(), "body": payload}
    return LineResult(status == 200, _line_json(line, response, None))


def _line_json(line: BatchLine, response: dict[str, Any] | None, error: dict[str, Any] | None) -> str:
    item = {"id": f"batch_req_{secrets.token_hex(12)}", "custom_id": line.custom_id, "response": response}
    item["error"] = error
    return dumps_line(item).rstrip("\n")
