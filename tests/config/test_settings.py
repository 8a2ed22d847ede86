"""Settings precedence (CLI > ENV > user YAML > packaged defaults) and clear configuration errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from suture.config.settings import ConfigError, QuizRules, load_settings

FIELD_ENV = "SUTURE_QUIZ__MAX_ANSWER_POSITION_SHARE"


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working directory and no SUTURE_* variables, so only each test's layers count."""
    monkeypatch.chdir(tmp_path)
    for name in ("SUTURE_CONFIG", FIELD_ENV, "SUTURE_MAX_RETRIES"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def _yaml(tmp_path: Path, share: float) -> Path:
    path = tmp_path / "custom.yaml"
    path.write_text(f"quiz:\n  max_answer_position_share: {share}\n")
    return path


@pytest.mark.parametrize(
    ("use_yaml", "use_env", "use_cli", "expected"),
    [
        (False, False, False, 0.5),  # packaged defaults.yaml
        (True, False, False, 0.6),
        (True, True, False, 0.7),
        (False, True, False, 0.7),
        (True, True, True, 0.8),
        (False, False, True, 0.8),
    ],
)
def test_given_layers_when_loaded_then_cli_beats_env_beats_yaml_beats_defaults(
    isolated: Path,
    monkeypatch: pytest.MonkeyPatch,
    use_yaml: bool,
    use_env: bool,
    use_cli: bool,
    expected: float,
) -> None:
    config_file = _yaml(isolated, 0.6) if use_yaml else None
    if use_env:
        monkeypatch.setenv(FIELD_ENV, "0.7")
    overrides = {"quiz": {"max_answer_position_share": 0.8}} if use_cli else None
    settings = load_settings(config_file, overrides)
    assert settings.quiz.max_answer_position_share == expected


def test_given_a_partial_yaml_when_loaded_then_other_quiz_thresholds_keep_their_defaults(
    isolated: Path,
) -> None:
    quiz = load_settings(_yaml(isolated, 0.6)).quiz
    assert quiz.model_dump(exclude={"max_answer_position_share"}) == QuizRules().model_dump(
        exclude={"max_answer_position_share"}
    )


@pytest.mark.parametrize("how", ["env", "local"])
def test_given_the_yaml_by_env_or_local_file_when_loaded_then_it_is_used(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    if how == "env":
        monkeypatch.setenv("SUTURE_CONFIG", str(_yaml(isolated, 0.65)))
    else:
        (isolated / "suture.yaml").write_text("quiz:\n  max_answer_position_share: 0.65\n")
    assert load_settings().quiz.max_answer_position_share == 0.65


def test_given_packaged_defaults_then_they_equal_the_documented_quiz_rules(isolated: Path) -> None:
    assert load_settings().quiz == QuizRules()


@pytest.mark.parametrize(
    ("yaml_text", "fragment"),
    [
        ("quiz:\n  max_answer_position_share: 7\n", "max_answer_position_share"),
        ("max_retries: 9\n", "max_retries"),
        ("no_such_setting: 1\n", "no_such_setting"),
        ("quiz: [unclosed\n", "invalid configuration"),
    ],
)
def test_given_a_bad_yaml_when_loaded_then_one_line_config_error(
    isolated: Path, yaml_text: str, fragment: str
) -> None:
    path = isolated / "bad.yaml"
    path.write_text(yaml_text)
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


def test_given_a_missing_config_file_when_loaded_then_config_error_names_it(isolated: Path) -> None:
    with pytest.raises(ConfigError, match=r"config file not found: .*nope\.yaml"):
        load_settings(isolated / "nope.yaml")
