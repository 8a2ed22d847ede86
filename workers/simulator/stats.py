"""What the simulator did, counted per model and in total, for ``GET /v1/_stats`` and benchmarks.

Online Chat Completions only: ``requests`` every request received (per model once its body names
a served model), ``completed`` the 200 replies sent, ``rate_limited`` every 429 (over a configured
limit or a chaos fault; ``limited`` counts the first kind alone), ``errors`` the other refusals and
faults, ``prompt_tokens`` / ``completion_tokens`` / ``cached_tokens`` of the replies sent and
``tokens`` their sum, ``metered_tokens`` what the limits counted of admitted requests (prompt +
``max_completion_tokens``, or + the completion served when none was asked: ``metered``), ``in_flight`` and
``peak_in_flight`` the requests being answered. Batch
lines are counted by the batch store (``batches`` in the snapshot), never here.
"""

from __future__ import annotations

import threading
from collections import Counter

COUNTS = (
    "requests",
    "completed",
    "rate_limited",
    "limited",
    "errors",
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
    "tokens",
    "metered_tokens",
)


class ServerStats:
    """Counters by model (``None``: a request whose model is not known) plus live in-flight gauges."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._models: dict[str | None, Counter[str]] = {}
        self.in_flight = 0
        self.peak_in_flight = 0
        self._model_flight: Counter[str] = Counter()
        self._model_peak: Counter[str] = Counter()

    def __repr__(self) -> str:
        return f"ServerStats(in_flight={self.in_flight}, models={sorted(m for m in self._models if m)})"

    def count(self, model: str | None, **amounts: int) -> None:
        """Add ``amounts`` (names from ``COUNTS``) to a model's counters."""
        with self._lock:
            counter = self._models.setdefault(model, Counter())
            counter.update(amounts)

    def served(self, model: str, prompt: int, completion: int, cached: int) -> None:
        """A 200 reply was sent with these token counts."""
        self.count(
            model,
            completed=1,
            prompt_tokens=prompt,
            completion_tokens=completion,
            cached_tokens=cached,
            tokens=prompt + completion,
        )

    def metered(self, model: str, tokens: int) -> None:
        """Tokens a limit counted for an admitted request of ``model`` (kept apart from what replies
        served)."""
        self.count(model, metered_tokens=tokens)

    def enter(self, model: str) -> None:
        """A request starts being answered (paired with ``leave``)."""
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            self._model_flight[model] += 1
            self._model_peak[model] = max(self._model_peak[model], self._model_flight[model])

    def leave(self, model: str) -> None:
        """A request has been answered, or its client went away."""
        with self._lock:
            self.in_flight -= 1
            self._model_flight[model] -= 1

    def snapshot(self) -> dict[str, object]:
        """Totals over every request, and the same counts per model under ``models``."""
        with self._lock:
            total: Counter[str] = Counter()
            models: dict[str, dict[str, int]] = {}
            for model, counter in self._models.items():
                total.update(counter)
                if model is not None:
                    row = {name: counter[name] for name in COUNTS}
                    row["in_flight"] = self._model_flight[model]
                    row["peak_in_flight"] = self._model_peak[model]
                    models[model] = row
            out: dict[str, object] = {name: total[name] for name in COUNTS}
            out.update(in_flight=self.in_flight, peak_in_flight=self.peak_in_flight, models=models)
        return out
