"""The simulator the settings describe: profile, chaos fault shares, seed and prompt cache, CLI values on top.

Every place that starts a simulator from settings (``suture simulator``, ``generate``, ``eval``,
``up``) goes through here, so ``simulator.*`` in suture.yaml or ``SUTURE_SIMULATOR__*`` means the
same everywhere. Precedence: the arguments given here (CLI) > the settings (ENV > YAML > defaults).
"""

from __future__ import annotations

from collections.abc import Mapping

from config.settings import Settings
from workers.simulator.profiles import get_profile
from workers.simulator.prompt_cache import PromptCache
from workers.simulator.server import SimulatorServer
from workers.simulator.serving import SimulatorHandle


def server_from_settings(
    settings: Settings,
    *,
    profile: str | None = None,
    latency_scale: float | None = None,
    seed: int | None = None,
    faults: Mapping[str, float] | None = None,
    api_key: str | None = None,
) -> SimulatorServer:
    """A simulator server from ``settings.simulator``, with any argument given here winning.

    ``faults`` replace single fault shares on top of the configured ones. Raises
    ``UnknownProfileError`` or ``FaultRatesError`` (both ``SimulatorError``) for unusable values.
    """
    sim = settings.simulator
    chosen = get_profile(profile or sim.profile, settings.quiz)
    rates = {**sim.faults.overrides(), **(faults or {})}
    if rates:
        chosen = chosen.with_faults(**rates)
    return SimulatorServer(
        chosen,
        sim.latency_scale if latency_scale is None else latency_scale,
        sim.seed if seed is None else seed,
        api_key,
        PromptCache(sim.prompt_cache_max_entries, sim.prompt_cache_idle_s),
    )


def start_from_settings(
    settings: Settings, *, latency_scale: float | None = None, host: str = "127.0.0.1", port: int = 0
) -> SimulatorHandle:
    """Start the configured simulator in a background thread of this process (``.base_url``, ``.stop()``)."""
    if latency_scale is not None and latency_scale < 0:
        raise ValueError(f"latency_scale must be >= 0, got {latency_scale}")
    return SimulatorHandle(server_from_settings(settings, latency_scale=latency_scale), host, port)
