"""The ``limits:`` settings section (per-model RPM/TPM) and the key it replaced."""

from __future__ import annotations

from pathlib import Path

import pytest

from suture.config.settings import ConfigError, load_settings
from suture.config.simulator_sections import ModelRateLimit


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("SUTURE_CONFIG", "SUTURE_LIMITS", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_limits_are_read_from_a_config_file(isolated: Path) -> None:
    # Given a suture.yaml with one model's limits / When loaded / Then they are the settings' limits
    path = isolated / "limits.yaml"
    path.write_text("limits:\n  gpt-5-nano: {rpm: 5000, tpm: 2000000}\n  gpt-5-mini: {tpm: 400000}\n")
    settings = load_settings(path)
    assert settings.limits == {
        "gpt-5-nano": ModelRateLimit(rpm=5000, tpm=2_000_000),
        "gpt-5-mini": ModelRateLimit(rpm=None, tpm=400_000),
    }


def test_limits_come_from_the_environment_as_json(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUTURE_LIMITS", '{"gpt-5-nano": {"rpm": 60}}')
    assert load_settings().limits == {"gpt-5-nano": ModelRateLimit(rpm=60)}


def test_by_default_no_model_is_limited(isolated: Path) -> None:
    assert load_settings().limits == {}


def test_the_replaced_key_is_one_line_saying_what_to_write(isolated: Path) -> None:
    # Given a config file still using worker.rate_limits_rpm
    path = isolated / "old.yaml"
    path.write_text("worker:\n  rate_limits_rpm: {gpt-5-nano: 500}\n")
    # When loaded / Then one line names the new key and what to write instead
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    message = str(caught.value)
    assert "\n" not in message
    assert "worker.rate_limits_rpm was replaced by the top-level key limits" in message
    assert "limits: {gpt-5-nano: {rpm: 500}}" in message


@pytest.mark.parametrize("bad", ['{"m": {"rpm": 0}}', '{"m": {"tpm": -5}}', '{"m": {"rps": 5}}'])
def test_bad_limits_are_refused(isolated: Path, monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    monkeypatch.setenv("SUTURE_LIMITS", bad)
    with pytest.raises(ConfigError, match="limits"):
        load_settings()
