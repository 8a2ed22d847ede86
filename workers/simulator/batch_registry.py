"""The batches one simulator holds: create (and start running), retrieve, cancel, list, count, stop.

Lives on the server's event loop (handlers call it there); each created batch runs as an asyncio
task until it ends, and ``shutdown`` cancels the ones still running when the server stops. State
is in memory for the server's lifetime, at most ``BatchOptions.max_batches`` batches.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from typing import Any

from suture.workers.simulator.batch_runner import BatchRunner
from suture.workers.simulator.batches import TERMINAL, Batch, check_create, new_batch
from suture.workers.simulator.errors import RequestRejected

log = logging.getLogger(__name__)


class BatchRegistry:
    """Batches by id, oldest first, each run by ``runner``."""

    def __init__(self, runner: BatchRunner) -> None:
        self.runner = runner
        self._batches: dict[str, Batch] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def __repr__(self) -> str:
        return f"BatchRegistry(batches={len(self._batches)}, running={len(self._tasks)})"

    def create(self, params: Any) -> Batch:
        """Check a ``POST /v1/batches`` body, store the batch and start running it (on the running loop)."""
        input_file_id, metadata = check_create(params)
        stored = self.runner.files.get(input_file_id)
        if stored.purpose != "batch":
            message = f"The input file must have purpose 'batch', got {stored.purpose!r}."
            raise RequestRejected(400, None, message, param="input_file_id")
        limit = self.runner.options.max_batches
        if len(self._batches) >= limit:
            raise RequestRejected(400, None, f"The suture simulator holds its maximum of {limit} batches.")
        batch = new_batch(input_file_id, metadata)
        self._batches[batch.id] = batch
        task = asyncio.get_running_loop().create_task(self._run(batch), name=f"simulated {batch.id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return batch

    def restore(self, batch: Batch, *, rerun: bool) -> None:
        """Hold a batch kept from an earlier run of the server (``batch_state``); ``rerun``: run it again
        (on the running loop)."""
        self._batches[batch.id] = batch
        if rerun:
            task = asyncio.get_running_loop().create_task(self._run(batch), name=f"simulated {batch.id}")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def get(self, batch_id: str) -> Batch:
        """The batch with this id; raises ``RequestRejected`` 404 if there is none."""
        batch = self._batches.get(batch_id)
        if batch is None:
            raise RequestRejected(404, None, f"No batch found with id '{batch_id}'.", param="batch_id")
        return batch

    def cancel(self, batch_id: str) -> Batch:
        """Start cancelling a running batch (idempotent); a finished one is a 409."""
        batch = self.get(batch_id)
        if batch.status in ("cancelling", "cancelled"):
            return batch
        if batch.status in TERMINAL:
            message = f"Cannot cancel a batch with status '{batch.status}'."
            raise RequestRejected(409, None, message, param="batch_id")
        batch.move("cancelling")
        batch.cancel_requested.set()
        return batch

    def listing(self) -> list[Batch]:
        """Every batch, newest first (as OpenAI lists them)."""
        return list(reversed(self._batches.values()))

    def snapshot(self) -> dict[str, Any]:
        """Batches by status and the lines and tokens they were answered with."""
        statuses: Counter[str] = Counter(b.status for b in self._batches.values())
        lines: Counter[str] = Counter()
        tokens: Counter[str] = Counter()
        for batch in self._batches.values():
            lines.update({k: batch.counts[k] for k in ("total", "completed", "failed")})
            tokens.update(batch.usage)
        return {
            "count": len(self._batches),
            "running": len(self._tasks),
            "statuses": dict(statuses),
            "requests": dict(lines),
            "tokens": tokens["input_tokens"] + tokens["output_tokens"],
        }

    async def shutdown(self, *_: object) -> None:
        """Cancel the batches still running (the server is stopping; their state goes with it)."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _run(self, batch: Batch) -> None:
        try:
            await self.runner.run(batch)
        except asyncio.CancelledError:
            raise
        except Exception:  # a simulator bug must not leave the batch in progress forever
            log.exception("simulated batch %s failed", batch.id)
            batch.errors = [
                {"code": "server_error", "line": None, "message": "simulator error", "param": None}
            ]
            batch.move("failed")
