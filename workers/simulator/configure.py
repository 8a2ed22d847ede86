"""The simulator the settings describe: profile, faults, seed, prompt cache, limits, batches, files; CLI on
top.

Each model's context window is the model table's ``context_tokens`` where set, else the profile's.
Every place that starts a simulator from settings (``suture simulator``, ``generate``, ``eval``,
``up``, ``batch``) goes through here, so ``simulator.*`` in suture.yaml or ``SUTURE_SIMULATOR__*``
means the same everywhere. Precedence: the arguments given here (CLI) > the settings (ENV > YAML >
defaults); a model's ``limits`` entry given here replaces that model's configured one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from suture.config.settings import Settings, SimulatorSettings
from suture.workers.simulator.batches import BatchOptions
from suture.workers.simulator.calibrated import apply_profile_file
from suture.workers.simulator.files import FileLimits
from suture.workers.simulator.limits import RateLimit
from suture.workers.simulator.profiles import ReaskSkill, UnitFaultRates, get_profile
from suture.workers.simulator.prompt_cache import PromptCache
from suture.workers.simulator.server import SimulatorServer
from suture.workers.simulator.serving import SimulatorHandle

_MB = 1024 * 1024


def server_from_settings(
    settings: Settings,
    *,
    profile: str | None = None,
    latency_scale: float | None = None,
    seed: int | None = None,
    faults: Mapping[str, float] | None = None,
    api_key: str | None = None,
    limits: Mapping[str, RateLimit] | None = None,
    batch: Mapping[str, float] | None = None,
    batch_state_file: Path | None = None,
) -> SimulatorServer:
    """A simulator server from ``settings.simulator``, with any argument given here winning.

    ``faults`` replace single fault shares on top of the configured ones; ``limits`` replace
    single models' limits; ``batch`` replaces ``simulator.batch_api`` fields (``delay_s``,
    ``expire_rate``, ``line_error_rate``). Raises ``UnknownProfileError`` or ``FaultRatesError``
    (both ``SimulatorError``) for unusable values.
    """
    sim = settings.simulator
    chosen = get_profile(profile or sim.profile, settings.quiz)
    rates = {**sim.faults.overrides(), **(faults or {})}
    if rates:
        chosen = chosen.with_faults(**rates)
    chosen = replace(
        chosen,
        unit_faults=UnitFaultRates(**sim.unit_faults.model_dump()),
        reask=ReaskSkill(sim.reask.fix_rate, sim.reask.keep_rate),
    )
    if sim.profile_file is not None:
        chosen = apply_profile_file(chosen, Path(sim.profile_file))
    windows = {
        model: price.context_tokens for model, price in settings.prices.items() if price.context_tokens
    }
    return SimulatorServer(
        chosen,
        sim.latency_scale if latency_scale is None else latency_scale,
        sim.seed if seed is None else seed,
        api_key,
        PromptCache(sim.prompt_cache_max_entries, sim.prompt_cache_idle_s),
        limits={**configured_limits(sim), **(limits or {})},
        batch_options=_batch_options(sim, batch or {}),
        file_limits=FileLimits(
            int(sim.files.max_file_mb * _MB), int(sim.files.max_total_mb * _MB), sim.files.max_files
        ),
        max_in_flight=sim.max_in_flight,
        idle_timeout_s=sim.idle_timeout_s,
        read_timeout_s=sim.read_timeout_s,
        context_tokens=windows,
        batch_state_file=batch_state_file,
    )


def configured_limits(sim: SimulatorSettings) -> dict[str, RateLimit]:
    """``simulator.limits`` as the server's limits (a model with neither limit set is not limited)."""
    return {
        model: RateLimit(limit.rpm, limit.tpm)
        for model, limit in sim.limits.items()
        if limit.rpm is not None or limit.tpm is not None
    }


def _batch_options(sim: SimulatorSettings, overrides: Mapping[str, float]) -> BatchOptions:
    values = {**sim.batch_api.model_dump(), **overrides}
    return BatchOptions(
        delay_s=float(values["delay_s"]),
        expire_rate=float(values["expire_rate"]),
        line_error_rate=float(values["line_error_rate"]),
        max_batches=int(values["max_batches"]),
    )


def start_from_settings(
    settings: Settings,
    *,
    latency_scale: float | None = None,
    host: str | None = None,
    port: int = 0,
    batch_state_file: Path | None = None,
) -> SimulatorHandle:
    """Start the configured simulator in a background thread of this process (``.base_url``, ``.stop()``).

    It binds ``host``, else ``listen.simulator_host`` (loopback by default); ``batch_state_file``: its
    files and batches kept there across restarts (``batch_state``).
    """
    if latency_scale is not None and latency_scale < 0:
        raise ValueError(f"latency_scale must be >= 0, got {latency_scale}")
    server = server_from_settings(settings, latency_scale=latency_scale, batch_state_file=batch_state_file)
    return SimulatorHandle(server, host or settings.listen.simulator_host, port)
