"""What a batch's model calls were served and what the provider metered for them, per model.

OpenAI counts a request against its tokens-per-minute limit as its prompt plus the
``max_completion_tokens`` it asks for, when it arrives; the reply then serves its prompt and the
completion it used. served ÷ metered says how much of a binding TPM became useful tokens (1.0: every
token counted was used). Read from the traces' attempts (``usage``, ``asked_completion_tokens``,
``cap_retries``); the calls deferred for the budget come from the cluster's counters
(``suture.workers.model.budget``), added by the batch run.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any


class ProviderTokens:
    """Accumulates served and metered tokens, requests and cap retries per model from job attempts."""

    def __init__(self) -> None:
        self.by_model: defaultdict[str, Counter[str]] = defaultdict(Counter)

    def add(self, attempts: list[dict[str, Any]]) -> None:
        """Fold in one job's attempts (a fix calls no model; a Batch API call is metered apart, not here)."""
        for attempt in attempts:
            if attempt.get("mode") == "fix" or attempt.get("batch_id"):
                continue
            usage = attempt.get("usage") or {}
            prompt = int(usage.get("input_tokens") or 0)
            completion = int(usage.get("output_tokens") or 0)
            counts = self.by_model[str(attempt.get("model"))]
            counts["served_tokens"] += prompt + completion
            counts["metered_tokens"] += prompt + int(attempt.get("asked_completion_tokens") or 0)
            counts["cap_retries"] += int(attempt.get("cap_retries") or 0)

    def summary(self, deferred: Mapping[str, Mapping[str, float]] | None = None) -> dict[str, dict[str, Any]]:
        """Per model: served, metered, served ÷ metered, cap retries, and (given) calls deferred for the
        budget."""
        out: dict[str, dict[str, Any]] = {}
        for model in sorted(set(self.by_model) | set(deferred or {})):
            counts = self.by_model.get(model, Counter())
            metered = counts["metered_tokens"]
            entry: dict[str, Any] = {
                "served_tokens": counts["served_tokens"],
                "metered_tokens": metered,
                "served_per_metered": round(counts["served_tokens"] / metered, 3) if metered else None,
                "cap_retries": counts["cap_retries"],
            }
            if deferred is not None:
                waits = deferred.get(model, {})
                entry["deferred_for_budget"] = int(waits.get("deferred_budget", 0))
                entry["deferred_for_budget_s"] = round(float(waits.get("deferred_budget_s", 0.0)), 1)
                entry["rate_limited"] = int(waits.get("rate_limited", 0))
            out[model] = entry
        return out
