"""A simulator built from settings: fault shares and prompt-cache limits from YAML/ENV, arguments on top."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from suture.config.settings import SimulatorFaults, SimulatorSettings, load_settings
from suture.workers.simulator import FaultRatesError, get_profile, server_from_settings, start_from_settings
from suture.workers.simulator.batches import BatchOptions
from suture.workers.simulator.limits import RateLimit
from suture.workers.simulator.profiles import CHAOS_FAULTS, FAULT_NAMES, FaultRates
from suture.workers.simulator.prompt_cache import DEFAULT_IDLE_S, DEFAULT_MAX_ENTRIES


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty working directory and no SUTURE_* variables, so only each test's layers count."""
    monkeypatch.chdir(tmp_path)
    for name in [n for n in os.environ if n.startswith("SUTURE_")]:
        monkeypatch.delenv(name)
    yield tmp_path


def test_the_settings_name_every_fault_the_simulator_draws() -> None:
    assert tuple(SimulatorFaults.model_fields) == FAULT_NAMES


def test_packaged_defaults_change_nothing_and_match_the_code() -> None:
    # Given only the packaged defaults, When the simulator is built from them
    settings = load_settings()
    server = server_from_settings(settings)
    # Then they equal the code's defaults: the realistic profile untouched and the default cache limits
    assert settings.simulator == SimulatorSettings()
    assert server.profile.name == "realistic" and server.profile.faults == FaultRates()
    assert (server.prompt_cache.idle_s, server.prompt_cache.max_entries) == (
        DEFAULT_IDLE_S,
        DEFAULT_MAX_ENTRIES,
    )


def test_yaml_and_env_reach_the_server_and_arguments_win(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a YAML with a chaos profile, one fault share and a cache idle time, and ENV on top of it
    config = isolated / "custom.yaml"
    config.write_text(
        "simulator:\n  profile: chaos\n  prompt_cache_idle_s: 60\n  faults:\n    empty: 0.2\n    refusal: "
        "0.1\n"
    )
    monkeypatch.setenv("SUTURE_SIMULATOR__FAULTS__REFUSAL", "0")
    monkeypatch.setenv("SUTURE_SIMULATOR__PROMPT_CACHE_MAX_ENTRIES", "50")
    settings = load_settings(config)
    # When a server is built from the settings, and once more with arguments as the CLI passes them
    configured = server_from_settings(settings)
    overridden = server_from_settings(settings, faults={"empty": 0.0}, seed=9, latency_scale=0.0)
    # Then the profile's other shares stay, YAML and ENV set theirs, and the arguments win over both
    assert configured.profile.faults == dataclasses.replace(CHAOS_FAULTS, empty=0.2, refusal=0.0)
    assert (configured.prompt_cache.idle_s, configured.prompt_cache.max_entries) == (60, 50)
    assert overridden.profile.faults == dataclasses.replace(CHAOS_FAULTS, empty=0.0, refusal=0.0)
    assert (overridden.seed, overridden.latency_scale) == (9, 0.0)


def test_shares_over_1_with_the_profile_are_refused(isolated: Path) -> None:
    # Given the chaos profile (0.32 of requests faulted) and a configured share that pushes it over 1
    config = isolated / "custom.yaml"
    config.write_text("simulator:\n  profile: chaos\n  faults:\n    empty: 0.8\n")
    # When the server is built, Then the shares are refused with their total
    with pytest.raises(FaultRatesError, match="more than 1"):
        server_from_settings(load_settings(config))


@pytest.mark.parametrize(
    ("rates", "message"),
    [
        ({"meteor": 0.1}, "unknown fault 'meteor'"),
        ({"empty": 1.5}, "outside 0..1"),
        ({"slow": -0.1}, "outside"),
    ],
)
def test_unusable_fault_shares_are_refused_by_the_profile(rates: dict[str, float], message: str) -> None:
    with pytest.raises(FaultRatesError, match=message):
        get_profile("realistic").with_faults(**rates)


def test_a_simulator_started_from_settings_serves_the_configured_faults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given every request configured to be rate limited (as `suture generate` or `suture up` start it)
    monkeypatch.setenv("SUTURE_SIMULATOR__FAULTS__RATE_LIMITED", "1")
    handle = start_from_settings(load_settings(), latency_scale=0.0)
    try:
        # When a request arrives
        body = {"model": "gpt-5-nano", "messages": [{"role": "user", "content": "hi"}]}
        response = httpx2.post(f"{handle.base_url}/chat/completions", json=body, timeout=10)
    finally:
        handle.stop()
    # Then it gets the simulated 429, still labelled a simulation
    assert response.status_code == 429
    assert response.headers["x-suture-simulated"] == "true"


def test_config_show_names_the_layer_of_each_fault_share(isolated: Path) -> None:
    # Given fault shares set in YAML, ENV and on the command line
    config = isolated / "custom.yaml"
    config.write_text("simulator:\n  faults:\n    slow: 0.05\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}
    env["SUTURE_SIMULATOR__FAULTS__RATE_LIMITED"] = "0.1"
    # When the effective settings are shown
    argv = ["--config", str(config), "config", "show", "--json", "--set", "simulator.faults.empty=0.2"]
    done = subprocess.run(
        [sys.executable, "-m", "suture", *argv], capture_output=True, text=True, timeout=30, env=env
    )
    # Then every share is its own row, with the layer it came from
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert rows["simulator.faults.empty"] == {"value": 0.2, "source": "cli"}
    assert rows["simulator.faults.rate_limited"] == {"value": 0.1, "source": "env"}
    assert rows["simulator.faults.slow"] == {"value": 0.05, "source": "yaml"}
    assert rows["simulator.faults.refusal"] == {"value": None, "source": "default"}


def test_limits_and_batch_settings_reach_the_server_and_arguments_win(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given limits for two models and batch knobs in YAML, one batch knob in ENV
    config = isolated / "custom.yaml"
    config.write_text(
        "simulator:\n"
        "  limits:\n    gpt-5-nano: {rpm: 5000, tpm: 2000000}\n    gpt-5: {tpm: 40000}\n"
        "  batch_api: {delay_s: 2.5, expire_rate: 0.1}\n"
        "  files: {max_file_mb: 1, max_files: 7}\n"
    )
    monkeypatch.setenv("SUTURE_SIMULATOR__BATCH_API__LINE_ERROR_RATE", "0.2")
    settings = load_settings(config)
    # When a server is built from them, and once more with CLI-style arguments
    configured = server_from_settings(settings)
    overridden = server_from_settings(
        settings, limits={"gpt-5": RateLimit(rpm=10)}, batch={"delay_s": 0.0, "expire_rate": 1.0}
    )
    # Then every layer arrives; an argument replaces a model's whole limit and single batch knobs
    assert configured.limiter.limits == {
        "gpt-5-nano": RateLimit(5000, 2_000_000),
        "gpt-5": RateLimit(None, 40_000),
    }
    assert configured.batches.runner.options == BatchOptions(
        delay_s=2.5, expire_rate=0.1, line_error_rate=0.2
    )
    assert (configured.files.limits.max_file_bytes, configured.files.limits.max_files) == (1024 * 1024, 7)
    assert overridden.limiter.limits["gpt-5"] == RateLimit(rpm=10)
    assert overridden.batches.runner.options == BatchOptions(
        delay_s=0.0, expire_rate=1.0, line_error_rate=0.2
    )


def test_an_embedded_simulator_meters_the_configured_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given one request a minute for gpt-5-nano in the environment (as `suture batch` or `up` start it)
    monkeypatch.setenv("SUTURE_SIMULATOR__LIMITS", '{"gpt-5-nano": {"rpm": 1}}')
    handle = start_from_settings(load_settings(), latency_scale=0.0)
    try:
        # When two requests arrive
        body = {"model": "gpt-5-nano", "messages": [{"role": "user", "content": "hi"}]}
        statuses = [
            httpx2.post(f"{handle.base_url}/chat/completions", json=body, timeout=10) for _ in range(2)
        ]
    finally:
        handle.stop()
    # Then the second is refused with the provider's headers
    assert [r.status_code for r in statuses] == [200, 429]
    assert statuses[1].headers["x-ratelimit-limit-requests"] == "1"
    assert statuses[1].json()["error"]["code"] == "rate_limit_exceeded"
