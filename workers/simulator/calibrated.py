"""A simulator profile file: a model's rates as `suture calibrate` measured them, loaded over a profile.

The file (YAML or JSON) holds, under ``models``, per model any of: ``imbalance_rate`` and
``duplicate_rate`` (first attempts, per question), ``slice_fix_rate``, ``reask_fix_rate`` and
``reask_keep_rate``. Each replaces the profile's trait for that model at every reasoning effort (the
file says at which effort it was measured). Set it with ``simulator.profile_file``; the model must be one
the simulator serves. Anything else in the file (the measurements with their intervals) is for people.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from suture.workers.simulator.errors import SimulatorError
from suture.workers.simulator.profiles import ModelTraits, Profile

RATES = ("imbalance_rate", "duplicate_rate", "slice_fix_rate", "reask_fix_rate", "reask_keep_rate")


class ProfileFileError(SimulatorError):
    """A profile file that cannot be read or holds something the simulator cannot use."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"simulator profile file {path}: {reason}")
        self.path = path
        self.reason = reason


def read_profile_file(path: Path) -> dict[str, dict[str, float]]:
    """The per-model rates of a profile file, checked (each a number in 0..1, names known)."""
    try:
        data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ProfileFileError(path, f"unreadable ({exc})") from None
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict) or not models:
        raise ProfileFileError(path, "no `models` mapping of model name to rates")
    rates: dict[str, dict[str, float]] = {}
    for model, values in models.items():
        if not isinstance(values, dict):
            raise ProfileFileError(path, f"model {model!r}: not a mapping of rates")
        unknown = sorted(set(values) - set(RATES))
        if unknown:
            raise ProfileFileError(
                path, f"model {model!r}: unknown rate {unknown[0]!r} (known: {', '.join(RATES)})"
            )
        for name, value in values.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise ProfileFileError(path, f"model {model!r}: {name} = {value!r} is not a number in 0..1")
        rates[str(model)] = {name: float(value) for name, value in values.items()}
    return rates


def apply_profile_file(profile: Profile, path: Path) -> Profile:
    """``profile`` with the rates of the file at ``path`` replacing its models' traits."""
    rates = read_profile_file(path)
    unknown = sorted(set(rates) - set(profile.models))
    if unknown:
        raise ProfileFileError(
            path, f"model {unknown[0]!r} is not served (served: {', '.join(profile.models)})"
        )
    models = {name: _with_rates(traits, rates.get(name, {})) for name, traits in profile.models.items()}
    return replace(profile, models=models)


def _with_rates(traits: ModelTraits, rates: dict[str, float]) -> ModelTraits:
    changed: dict[str, Any] = dict(rates)  # every name is one of RATES, each a float field of ModelTraits
    return replace(traits, **changed)
