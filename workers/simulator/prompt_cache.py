"""A per-model prompt-prefix cache, so simulated usage reports ``cached_tokens`` the way OpenAI does.

A job's retries repeat the system prompt and the document before the part that differs; OpenAI
bills that repeated prefix at the cached-input price, so a simulator that never reports a cache
hit overstates what retries cost. What OpenAI documents, and this module reproduces:

- caching is automatic for prompts of 1,024 tokens or more; shorter prompts report 0 cached;
- a hit is the longest previously computed *exact* prefix of the prompt, starting at 1,024 tokens
  and growing in 128-token increments, reported in ``usage.prompt_tokens_details.cached_tokens``;
- the structured-output schema is part of the prefix; caches are per model;
- ``prompt_cache_key`` routes requests that share it to the same cache; here it partitions the
  cache (requests with different keys never share a prefix, a conservative reading of a routing
  hint), so the calls of one suture job, which all carry the job id, share cached prefixes and
  another job or another policy under ``suture eval`` never makes a job look cheaper;
- a cached prefix is cleared after about 5-10 minutes of inactivity, and within one hour at most.

Sources: OpenAI, "Prompt Caching in the API" (2024-10-01, https://openai.com/index/api-prompt-caching/:
"caches the longest prefix of a prompt that has been previously computed, starting at 1,024
tokens and increasing in 128-token increments"); OpenAI API guide "Prompt caching"
(https://developers.openai.com/api/docs/guides/prompt-caching: 1024-token minimum, exact prefix
matches, the schema as a prefix, ``cached_tokens`` zero under 1024 tokens, 5-10 minutes of
inactivity, one hour at most; the same retention is stated in Azure OpenAI's "Prompt caching" page).

How: the prompt is read as the token stream ``prompt_tokens`` counts (``tokens.counted_text`` of
each message, four characters a token); a running hash of the model, the schema and that stream
is taken at every 128-token boundary from 1,024 on. The cache is an LRU of those digests, bounded
by entry count and by idle time. Cached counts depend only on the request sequence and the clock,
so a seeded run reproduces them; one lock makes lookup-and-remember atomic across threads.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

from suture.workers.simulator.request import ChatRequest
from suture.workers.simulator.tokens import CHARS_PER_TOKEN, counted_text, tokens

MIN_CACHED_TOKENS = 1024
BLOCK_TOKENS = 128
MAX_LIFETIME_S = 3600.0  # "always removed within one hour", however busy
DEFAULT_IDLE_S = 300.0  # the low end of "5-10 minutes of inactivity": never overstates the savings
DEFAULT_MAX_ENTRIES = 100_000  # digests of 128-token boundaries: ~12.8M prompt tokens, ~25 MB


def boundary_digests(request: ChatRequest) -> list[bytes]:
    """A digest of the prompt up to each cacheable boundary (1,024, 1,152, ... tokens), shortest first."""
    hasher = hashlib.blake2b(digest_size=16)
    schema = json.dumps(request.json_schema, sort_keys=True)
    # The cache key, model and schema come first: requests differing in any of them share no prefix.
    key = request.prompt_cache_key or ""
    hasher.update(f"{key}\x1f{request.model}\x1f{request.schema_name}\x1f{schema}\x1d".encode())
    digests: list[bytes] = []
    position = 0  # tokens of the stream hashed so far
    for message in request.messages:
        text = counted_text(message)
        # Roles take no tokens in the estimate but do make prompts differ; the separators cannot occur
        # inside JSON text (json.dumps escapes control characters).
        hasher.update(f"\x1e{message.get('role')}\x1f".encode())
        start, length = 0, tokens(text)
        while start < length:
            step = min(length - start, BLOCK_TOKENS - position % BLOCK_TOKENS)
            hasher.update(text[start * CHARS_PER_TOKEN : (start + step) * CHARS_PER_TOKEN].encode())
            start, position = start + step, position + step
            if position % BLOCK_TOKENS == 0 and position >= MIN_CACHED_TOKENS:
                digests.append(hasher.copy().digest())
    return digests


class PromptCache:
    """Prompt prefixes a simulated model has processed, as an LRU bounded by entries and idle seconds.

    ``max_entries=0`` turns caching off (every reply reports 0 cached tokens). ``clock`` returns
    monotonic seconds; tests pass their own to expire entries without waiting.
    """

    def __init__(
        self,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        idle_s: float = DEFAULT_IDLE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 0 or idle_s <= 0:
            raise ValueError(f"need max_entries >= 0 and idle_s > 0, got {max_entries} and {idle_s}")
        self.max_entries = max_entries
        self.idle_s = idle_s
        self._clock = clock
        self._lock = threading.Lock()
        # digest -> (created_s, last_used_s), least recently used first.
        self._entries: OrderedDict[bytes, tuple[float, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"PromptCache(entries={len(self)}, max_entries={self.max_entries}, idle_s={self.idle_s})"

    def serve(self, request: ChatRequest) -> int:
        """Tokens of ``request``'s prompt served from the cache, then remember its prefixes."""
        if self.max_entries == 0:
            return 0
        digests = boundary_digests(request)  # hashed outside the lock: it is the slow part
        if not digests:
            return 0
        with self._lock:
            now = self._clock()
            self._expire_idle(now)
            hit = self._longest_hit(digests, now)
            self._remember(digests, now)
        return 0 if hit < 0 else MIN_CACHED_TOKENS + hit * BLOCK_TOKENS

    def _expire_idle(self, now: float) -> None:
        # Least recently used first, so the idle ones are all at the front.
        while self._entries:
            digest, (_, used_s) = next(iter(self._entries.items()))
            if now - used_s < self.idle_s:
                return
            del self._entries[digest]

    def _longest_hit(self, digests: Sequence[bytes], now: float) -> int:
        for index in range(len(digests) - 1, -1, -1):
            entry = self._entries.get(digests[index])
            if entry is not None and now - entry[0] < MAX_LIFETIME_S:
                return index
        return -1

    def _remember(self, digests: Sequence[bytes], now: float) -> None:
        for digest in digests:
            entry = self._entries.pop(digest, None)
            created_s = entry[0] if entry is not None and now - entry[0] < MAX_LIFETIME_S else now
            self._entries[digest] = (created_s, now)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
