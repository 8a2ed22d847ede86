"""Batch API rounds: a job's model call written as a batch line, submitted once, polled, fed back.

The life of a line (``suture.tasks.batch_mode`` says which calls go this way)::

    step (attempt / slice) ─ no reply stored ─► line recorded as waiting (once per custom_id); the
       ▲                                          step ends "awaiting_batch"
       │                                    the watchdog's sweep, collect_s after the model's first line:
       │                                          claim the waiting lines into a round ─► suture.batch_round
       │                                    suture.batch_round (claimed): find a batch with the round's id
       │                                          in its metadata, else upload + create; record its id
       │                                    the sweep, every poll_s: suture.batch_round (submitted) polls
       └─ each step sent again ◄─────────── ended: read its files, store one reply per line, close
    step finds its reply by custom_id and applies it through the engine as an online reply

Nothing is submitted twice: a round is claimed atomically; only the holder of its submit lock
submits, and first looks for a batch already created for the round (a task killed between create
and record); a round task killed mid-way is sent again by the sweep once its lease expires. The
replies are stored once (SET NX), so a redelivered round changes nothing and only re-sends steps,
which are idempotent. A ``suture batch`` stopped and rerun, or a worker SIGKILLed, finds the round
in the job store and polls the same batch.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from suture.config.settings import Settings
from suture.tasks.batch_mode import custom_id, through_batch
from suture.tasks.calls import ModelCall, ModelReply
from suture.tasks.dispatch_order import PriorityClass
from suture.tasks.vocabulary import FlowOutcome
from suture.workers.model.batch_client import ENDPOINT, BatchApiError, BatchView
from suture.workers.model.batch_results import read_results
from suture.workers.model.wire import request_body
from suture.workers.store.batch_lines import ANSWERED, BatchLines

log = logging.getLogger(__name__)

AWAITING = FlowOutcome.AWAITING_BATCH
# A round whose batch cannot be created this many times in a row ends its lines as failed calls.
MAX_SUBMIT_TRIES = 5


class BatchService(Protocol):
    """The Files/Batch calls a round needs (``suture.workers.model.batch_client.BatchClient``)."""

    simulated: bool

    def find(self, round_id: str, since_s: float) -> str | None: ...

    def submit(self, round_id: str, lines: list[str], metadata: dict[str, str] | None = None) -> str: ...

    def retrieve(self, batch_id: str) -> BatchView: ...

    def content(self, file_id: str) -> bytes: ...


class StepSender(Protocol):
    """Sends a job's step again (the flow's dispatcher)."""

    def attempt(self, job_id: str, n: int, priority: PriorityClass, tenant: str | None) -> None: ...

    def slices(
        self, job_id: str, n: int, pointers: list[str], priority: PriorityClass, tenant: str | None
    ) -> None: ...


@dataclass
class BatchRounds:
    """The Batch API side of one worker process: lines recorded by steps, rounds run by tasks."""

    settings: Settings
    lines: BatchLines
    service: BatchService
    steps: StepSender
    send_round: Callable[[str], None]  # publishes suture.batch_round(round_id)

    # -- the steps' side ------------------------------------------------------------------------
    def call(self, job_id: str, call: ModelCall, n: int, pointer: str | None = None) -> ModelReply | None:
        """The reply of call ``n`` (of the slice at ``pointer``) if it went through a finished batch;
        None when it now waits for one. Only for calls ``through_batch`` says go this way."""
        line_id = custom_id(job_id, n, pointer)
        stored = self.lines.reply(line_id)
        if stored is not None:
            return ModelReply.model_validate(stored)
        body = request_body(call, self.settings)
        request = {"custom_id": line_id, "method": "POST", "url": ENDPOINT, "body": body}
        entry = {"job_id": job_id, "n": n, "pointer": pointer, "model": call.model, "request": request}
        if self.lines.add(call.model, line_id, entry, job_id, time.time()) == ANSWERED:
            found = self.lines.reply(line_id)
            return ModelReply.model_validate(found) if found is not None else None
        return None

    # -- the watchdog's side --------------------------------------------------------------------
    def sweep(self, now_s: float) -> list[str]:
        """Claim the waiting lines that are due into rounds, and send the rounds that are due; their ids."""
        self.lines.touch_awaiting(now_s)
        config = self.settings.batch_api
        for model, (since_s, count) in self.lines.waiting().items():
            if count and (now_s - since_s >= config.collect_s or count >= config.max_lines):
                round_id = uuid.uuid4().hex
                claimed = self.lines.claim(model, round_id, now_s, config.max_lines)
                if claimed:
                    log.info("batch round %s: %d line(s) of %s claimed", round_id, claimed, model)
        sent = []
        for round_id in self.lines.open_rounds():
            fields = self.lines.round(round_id)
            if not fields:  # expired with the store's ttl: nothing left to do
                continue
            if float(fields.get("next_poll_s") or 0) <= now_s and self.lines.take_lease(
                round_id, config.lease_s
            ):
                self.send_round(round_id)
                sent.append(round_id)
        return sent

    # -- suture.batch_round ----------------------------------------------------------------------
    def advance(self, round_id: str) -> str:
        """Take a round one step on: submit its batch, poll it, or collect it; returns its status."""
        fields = self.lines.round(round_id)
        status = fields.get("status", "gone")
        try:
            if status == "claimed":
                return self._submit(round_id, fields)
            if status == "submitted":
                return self._poll(round_id, fields)
            if status == "collected":
                return self._send_steps(round_id)
        except BatchApiError as exc:
            log.warning("batch round %s: %s; trying again at the next poll", round_id, exc)
            self._later(round_id)
            return f"{status}:retry"
        return status

    def _submit(self, round_id: str, fields: dict[str, str]) -> str:
        if not self.lines.lock_submit(round_id, self.settings.batch_api.lease_s):
            return "claimed:busy"  # another task is submitting it; the sweep sends this round again
        try:
            batch_id = self.service.find(round_id, float(fields.get("created_s") or 0))
            if batch_id is not None:
                log.warning(
                    "batch round %s: batch %s was created before a crash; polling it", round_id, batch_id
                )
            else:
                lines = self.lines.lines(round_id)
                requests = [_dumps(entry["request"]) for _, entry in sorted(lines.items())]
                batch_id = self.service.submit(round_id, requests)
                log.info(
                    "batch round %s: batch %s created with %d line(s)", round_id, batch_id, len(requests)
                )
        except BatchApiError as exc:
            # Not created, or created without an answer: the next try looks for it first, then submits.
            self.lines.unlock_submit(round_id)
            if self.lines.count_failure(round_id) < MAX_SUBMIT_TRIES:
                raise
            log.error("batch round %s: not submitted after %d tries: %s", round_id, MAX_SUBMIT_TRIES, exc)
            return self._collect(round_id, BatchView(f"(none: {exc})", "unsubmitted", None, None, {}))
        self.lines.update(round_id, status="submitted", batch_id=batch_id)
        self._later(round_id)
        return "submitted"

    def _poll(self, round_id: str, fields: dict[str, str]) -> str:
        try:
            view = self.service.retrieve(fields["batch_id"])
        except BatchApiError as exc:
            if exc.status != 404:
                raise
            # The endpoint no longer knows the batch (a restarted simulator; never OpenAI within its
            # window): its lines end as failed calls, and their jobs' policies go on from there.
            log.warning("batch round %s: batch %s is gone: %s", round_id, fields["batch_id"], exc)
            view = BatchView(fields["batch_id"], "lost", None, None, {})
        self.lines.count_poll(round_id)
        if not view.ended:
            self._later(round_id)
            return view.status
        return self._collect(round_id, view)

    def _collect(self, round_id: str, view: BatchView) -> str:
        """Store one reply per line of the ended batch (an error for a line without a result), send the
        steps."""
        lines = self.lines.lines(round_id)
        files = [self.service.content(f) for f in (view.output_file_id, view.error_file_id) if f]
        models = {line_id: str(entry["model"]) for line_id, entry in lines.items()}
        replies = read_results(
            view.id, models, files, self.settings.prices, status=view.status, simulated=self.service.simulated
        )
        self.lines.put_replies({k: self._redacted(r).model_dump(mode="json") for k, r in replies.items()})
        self.lines.update(round_id, status="collected", batch_status=view.status)
        log.info(
            "batch round %s: batch %s %s, %d repl(ies) stored", round_id, view.id, view.status, len(replies)
        )
        return self._send_steps(round_id)

    def _send_steps(self, round_id: str) -> str:
        """Send every step of the round's lines again; each finds its reply and applies it once."""
        lines = self.lines.lines(round_id)
        attempts: set[tuple[str, int]] = set()
        slices: dict[tuple[str, int], list[str]] = defaultdict(list)
        for entry in lines.values():
            key = (str(entry["job_id"]), int(entry["n"]))
            if entry.get("pointer") is None:
                attempts.add(key)
            else:
                slices[key].append(str(entry["pointer"]))
        # Batch API work is bulk work: these steps only apply replies a batch took hours to return.
        for job_id, n in sorted(attempts):
            self.steps.attempt(job_id, n, "bulk", None)
        for (job_id, n), pointers in sorted(slices.items()):
            self.steps.slices(job_id, n, sorted(pointers), "bulk", None)
        self.lines.close(round_id, sorted({str(e["job_id"]) for e in lines.values()}))
        return "collected"

    def _redacted(self, reply: ModelReply) -> ModelReply:
        """An error reply's text without a configured secret (the provider's message goes into traces)."""
        if reply.error is None:
            return reply
        text = reply.error
        for secret in self.settings.secrets():
            text = text.replace(secret, "[redacted]")
        return reply.model_copy(update={"error": text})

    def _later(self, round_id: str) -> None:
        self.lines.update(round_id, next_poll_s=time.time() + self.settings.batch_api.poll_s)
        self.lines.release_lease(round_id)


def goes_through_batch(spec: dict[str, Any], n: int, pointer: str | None) -> bool:
    """True if this call of a job (its stored ``spec``) goes through the Batch API."""
    return through_batch(spec.get("batch_api"), "full" if pointer is None else "slice", n)


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
