"""A ``Flow`` driven in-process against a real Redis: the tasks it sends queue up here and run on demand.

No broker and no worker: ``InlineDispatcher`` records each task the flow sends, ``drain`` runs them in
order (as workers would, one at a time), and ``ScriptedCaller`` answers model calls with the scripted
quizzes of ``tests.fixtures.scripted_model`` (the first quiz has ``imbalanced`` questions to repair).
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

import redis

from config.settings import Settings, load_settings
from tasks.calls import ModelCall, ModelReply
from tests.fixtures.scripted_model import document, quiz, repaired_question
from workers.flow import Caller, Flow
from workers.store import JobStore

SLICE = re.compile(r'<slice pointer="([^"]+)"')
QUESTIONS = 4


@dataclass
class InlineDispatcher:
    """Records every task the flow sends, as ``(name, args)``; ``drain`` runs them."""

    sent: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)

    def attempt(self, job_id: str, n: int) -> None:
        self.sent.append(("attempt", (job_id, n)))

    def slices(self, job_id: str, n: int, pointers: list[str]) -> None:
        self.sent.extend(("slice", (job_id, n, pointer)) for pointer in pointers)

    def merge(self, job_id: str, n: int) -> None:
        self.sent.append(("merge", (job_id, n)))

    def deliver(self, job_id: str, *, give_up: str | None = None) -> None:
        self.sent.append(("deliver", (job_id, give_up)))

    def callback(self, target: str, job_id: str, status: str) -> None:
        self.sent.append(("callback", (target, job_id, status)))

    def waiting(self) -> int | None:
        return len(self.sent)  # sent and not yet run, as messages wait in a queue

    def give_ups(self) -> list[str | None]:
        """The reasons of every deliver sent to give a job up (the watchdog's or a poison's)."""
        return [args[1] for name, args in self.sent if name == "deliver" and args[1]]


@dataclass
class ScriptedCaller:
    """Answers full calls with a quiz of ``imbalanced`` bad questions and slice calls with a repair."""

    imbalanced: int = 0
    calls: list[str] = field(default_factory=list)

    def __call__(self, call: ModelCall) -> ModelReply:
        prompt = "\n".join(m["content"] for m in call.messages)
        found = SLICE.search(prompt) if call.schema_name.endswith("_slice") else None
        if found:
            self.calls.append(found.group(1))
            value: Any = {"value": repaired_question(int(found.group(1).rsplit("/", 1)[1]))}
        else:
            self.calls.append("full")
            value = quiz(QUESTIONS, self.imbalanced)
        return ModelReply(model=call.model, text=json.dumps(value), finish_reason="stop")


def inline_flow(client: redis.Redis, caller: Caller, **worker: Any) -> tuple[Flow, InlineDispatcher]:
    """A flow on its own key prefix of ``client``'s Redis, with ``worker`` settings overridden."""
    settings: Settings = load_settings(overrides={"worker": worker})
    store = JobStore(client, ttl_s=600, prefix=f"t{uuid.uuid4().hex}")
    dispatcher = InlineDispatcher()
    return Flow(settings=settings, store=store, caller=caller, dispatcher=dispatcher), dispatcher


def new_job(flow: Flow) -> str:
    """Store a queued quiz job (as ``enqueue`` does, without publishing its first attempt)."""
    spec = {"contract": "quiz", "params": {"questions": QUESTIONS}, "input": document(QUESTIONS)}
    job_id, _ = flow.store.create(uuid.uuid4().hex, spec | {"policy": None}, deadline_s=10**10)
    return job_id


def drain(flow: Flow, dispatcher: InlineDispatcher, limit: int = 100) -> list[str]:
    """Run every task sent so far and those they send, in order; returns each one's outcome."""
    outcomes: list[str] = []
    while dispatcher.sent and len(outcomes) < limit:
        name, args = dispatcher.sent.pop(0)
        if name == "attempt":
            outcomes.append(flow.attempt(*args))
        elif name == "slice":
            outcomes.append(flow.surgical_slice(*args))
        elif name == "merge":
            outcomes.append(flow.merge(*args))
        elif name == "deliver":
            outcomes.append(flow.deliver(args[0], give_up=args[1]))
    return outcomes
