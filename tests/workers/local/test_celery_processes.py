"""The environment of the workers a command's stack starts: its URLs, and the settings file it was given."""

from __future__ import annotations

from pathlib import Path

import pytest

from suture.config.settings import load_settings
from suture.workers.local.celery_processes import child_env


def test_workers_read_the_config_file_the_command_was_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given `suture --config limits.yaml ...` run from another folder, nothing in the environment
    config = tmp_path / "limits.yaml"
    config.write_text("limits:\n  gpt-5-nano: {rpm: 3000, tpm: 40000}\n")
    monkeypatch.delenv("SUTURE_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path.parent)
    settings = load_settings(str(config))
    # When its stack points the settings at what it started and builds the workers' environment
    started = settings.model_copy(update={"redis_url": "redis://127.0.0.1:1/0"})
    env = child_env(started)
    # Then the workers load the same file, so they keep the same limits
    assert env["SUTURE_CONFIG"] == str(config.resolve())
    monkeypatch.setenv("SUTURE_CONFIG", env["SUTURE_CONFIG"])
    assert load_settings().limits == settings.limits != {}


def test_without_a_config_file_the_workers_environment_names_none(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Given settings from the environment alone
    monkeypatch.delenv("SUTURE_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    # Then no settings file is passed on
    assert "SUTURE_CONFIG" not in child_env(load_settings())


def test_a_file_found_in_the_working_directory_is_left_for_the_workers_to_find(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Given a suture.yaml found in the working directory (not named by the user)
    monkeypatch.delenv("SUTURE_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "suture.yaml").write_text("limits:\n  gpt-5-nano: {tpm: 40000}\n")
    settings = load_settings()
    # Then it is not passed on as a named file: the workers, started here, find it as found (and check it so)
    assert settings.limits and "SUTURE_CONFIG" not in child_env(settings)
