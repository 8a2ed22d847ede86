"""How long batches really take against their estimate, measured on this machine, for the next ``--dry-run``.

The model-time estimate (``estimate.Estimator``: each model's first-token time and output rate, the
policy's measured wall-time ratio, the jobs in flight) leaves out what a whole run adds: the stack
starting, queues, the workers' CPU. So each ``suture batch`` that ran every section of its plan (none
kept, none left by a budget, not through the Batch API) appends its wall time and its estimate to the
user's timings file (``estimate.timings_file``, else ``$XDG_STATE_HOME/suture/timings.jsonl``), and a
dry run multiplies its estimate by the median ratio of the latest ``KEEP`` records; with none yet, by
``estimate.wall_time_ratio`` (measured when it was set: config/defaults.yaml says on what).
"""

from __future__ import annotations

import contextlib
import json
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from suture.config.settings import Settings
from suture.config.sources import state_dir

TIMINGS = "timings.jsonl"
KEEP = 20  # the latest records a ratio is the median of (older ones are dropped when one is added)


@dataclass(frozen=True)
class WallRatio:
    """What a batch's model-time estimate is multiplied by, and where that came from."""

    ratio: float
    measured_runs: int  # 0: the setting ``estimate.wall_time_ratio``

    def describe(self) -> str:
        """How the ratio reads after a time estimate."""
        if self.measured_runs:
            return (
                f"x{self.ratio:.2f} wall-time ratio measured on {self.measured_runs} earlier batch(es) here"
            )
        return f"x{self.ratio:g} wall-time ratio, estimate.wall_time_ratio"


def timings_path(settings: Settings) -> Path:
    """The timings file of this user (or the one the settings name)."""
    given = settings.estimate.timings_file
    return Path(given) if given else state_dir() / "suture" / TIMINGS


def wall_ratio(settings: Settings) -> WallRatio:
    """The median measured ratio of the latest batches, else the configured one."""
    ratios = [r for r in _ratios(timings_path(settings)) if r > 0][-KEEP:]
    if not ratios:
        return WallRatio(settings.estimate.wall_time_ratio, 0)
    return WallRatio(statistics.median(ratios), len(ratios))


def record(settings: Settings, estimated_s: float | None, wall_s: float, jobs: int) -> None:
    """Add one finished batch's measured ratio (kept to the latest ``KEEP``); never fails the batch."""
    if not settings.estimate.learn_wall_time or not estimated_s or estimated_s <= 0 or jobs < 1:
        return
    path = timings_path(settings)
    line = {"at": round(time.time(), 3), "estimated_s": round(estimated_s, 3), "wall_s": round(wall_s, 3)}
    line |= {"jobs": jobs, "ratio": round(wall_s / estimated_s, 4)}
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        kept = [*_lines(path)[-(KEEP - 1) :], json.dumps(line)]
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text("\n".join(kept) + "\n", encoding="utf-8")
        temporary.replace(path)


def _lines(path: Path) -> list[str]:
    if path.is_symlink() or not path.is_file():
        return []
    with contextlib.suppress(OSError, UnicodeDecodeError):
        return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return []


def _ratios(path: Path) -> list[float]:
    ratios = []
    for line in _lines(path):
        with contextlib.suppress(ValueError, TypeError, KeyError):
            ratios.append(float(json.loads(line)["ratio"]))
    return ratios
