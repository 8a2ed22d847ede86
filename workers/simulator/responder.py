"""How the simulated model answers one Chat Completions request: the chaos draw, then the completion.

One ``Responder`` serves both the online endpoint and Batch API lines, so a prompt gets the same
answer, the same bias and the same fault draws either way. Answers are deterministic for (seed,
model, request seed, prompt); chaos faults are drawn per occurrence of a prompt, so a retry of the
same request can succeed and a rerun of the same request sequence reproduces the same faults.
Occurrences are counted per digest of the prompt (16 bytes), never the prompt itself, so memory
kept per distinct prompt is bounded whatever its size.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass

from suture.workers.simulator.bias import seeded
from suture.workers.simulator.completion import Completion, answer, complete
from suture.workers.simulator.faults import CONTENT_FAULTS, Fault, draw_fault
from suture.workers.simulator.profiles import Profile
from suture.workers.simulator.prompt import message_text
from suture.workers.simulator.prompt_cache import PromptCache
from suture.workers.simulator.request import ChatRequest

TRANSPORT_FAULTS: frozenset[str] = frozenset({"rate_limited", "server_error", "dropped_connection"})
_MAX_REMEMBERED_PROMPTS = 200_000


@dataclass(frozen=True)
class Outcome:
    """A transport fault the request gets instead of a reply, or the completion it gets."""

    transport_fault: Fault | None = None
    completion: Completion | None = None


class Responder:
    """The simulated model: one profile, latency scale, seed and prompt cache."""

    def __init__(self, profile: Profile, latency_scale: float, seed: int, prompt_cache: PromptCache) -> None:
        self.profile = profile
        self.latency_scale = latency_scale
        self.seed = seed
        self.prompt_cache = prompt_cache
        self._occurrences: Counter[bytes] = Counter()  # prompt digest -> times seen

    def __repr__(self) -> str:
        return (
            f"Responder(profile={self.profile.name!r}, latency_scale={self.latency_scale}, seed={self.seed})"
        )

    def respond(self, chat: ChatRequest, *, extra_failure_rate: float = 0.0) -> Outcome:
        """Draw this occurrence's fault, then answer; ``extra_failure_rate`` adds server errors.

        The extra draw (a batch line's own failure share) comes from its own stream, so with it at
        0 a request is answered exactly as the online endpoint answers it.
        """
        identity = _identity(chat)
        occurrence = self._occurrence(identity)
        fault_rng = seeded(self.seed, "fault", chat.model, chat.seed, occurrence, identity)
        fault = draw_fault(self.profile.faults, fault_rng) if self.profile.faults.total() else None
        if fault in TRANSPORT_FAULTS:
            return Outcome(transport_fault=fault)
        if extra_failure_rate > 0:
            extra = seeded(self.seed, "line-failure", chat.model, chat.seed, occurrence, identity)
            if extra.random() < extra_failure_rate:
                return Outcome(transport_fault="server_error")
        # Only a prompt the model processed reaches the cache: transport faults return above.
        cached = self.prompt_cache.serve(chat)
        text = answer(chat, self.profile, seeded(self.seed, chat.model, chat.seed, identity))
        content_fault = fault if fault in CONTENT_FAULTS or fault == "slow" else None
        completion = complete(
            chat, text, content_fault, self.profile, self.latency_scale, fault_rng, cached_tokens=cached
        )
        return Outcome(completion=completion)

    def draw(self, *key: object) -> float:
        """A seeded draw in 0..1 for a decision about ``key`` (e.g. a batch's expiry), per occurrence."""
        identity = "\x1e".join(str(part) for part in key)
        return seeded(self.seed, "draw", self._occurrence(identity), identity).random()

    def _occurrence(self, identity: str) -> int:
        if len(self._occurrences) > _MAX_REMEMBERED_PROMPTS:
            self._occurrences.clear()
        digest = hashlib.blake2b(identity.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        self._occurrences[digest] += 1
        return self._occurrences[digest]


def _identity(chat: ChatRequest) -> str:
    """The prompt as the model reads it: schema name and every message, role by role."""
    parts = [chat.schema_name] + [f"{m.get('role')}:{message_text(m.get('content'))}" for m in chat.messages]
    return "\x1e".join(parts)
