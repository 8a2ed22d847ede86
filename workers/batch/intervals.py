"""Measured shares and means with their 95 % intervals (Wilson for shares, normal for means)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

Z95 = 1.959964  # the standard normal's 97.5th percentile


@dataclass
class Rate:
    """A share measured as successes of trials, with its Wilson 95 % interval."""

    successes: int = 0
    trials: int = 0

    def add(self, success: bool) -> None:
        """Count one trial."""
        self.trials += 1
        self.successes += int(success)

    @property
    def value(self) -> float | None:
        """The measured share (None before any trial)."""
        return self.successes / self.trials if self.trials else None

    def interval(self) -> tuple[float, float] | None:
        """The Wilson score interval at 95 % (None before any trial)."""
        if not self.trials:
            return None
        n, p = self.trials, self.successes / self.trials
        centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
        half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / (1 + Z95**2 / n)
        return max(0.0, centre - half), min(1.0, centre + half)

    def as_dict(self) -> dict[str, Any]:
        """The figures as JSON."""
        low_high = self.interval()
        return {
            "value": _round(self.value),
            "ci95": [_round(x) for x in low_high] if low_high else None,
            "successes": self.successes,
            "trials": self.trials,
        }


@dataclass
class Mean:
    """A mean of samples with its normal 95 % interval."""

    samples: list[float] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The figures as JSON."""
        n = len(self.samples)
        if not n:
            return {"value": None, "ci95": None, "n": 0}
        mean = sum(self.samples) / n
        sd = math.sqrt(sum((x - mean) ** 2 for x in self.samples) / (n - 1)) if n > 1 else 0.0
        half = Z95 * sd / math.sqrt(n)
        return {"value": round(mean, 1), "ci95": [round(mean - half, 1), round(mean + half, 1)], "n": n}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
