"""The packaged defaults.yaml and the settings models state each default once between them.

Each default is defined by its pydantic field; config/defaults.yaml documents every setting beside
its value for the reader, and is rewritten from the models by ``python -m tools.defaults``. These tests
fail the moment the two disagree, or a setting goes undocumented, naming the key. The only values of
the YAML with no model default are its data tables (the model prices, the named policies), which have
no other home.
"""

from __future__ import annotations

from typing import Any

import yaml

from suture.config.settings import DEFAULTS_FILE, Settings
from tools.defaults import differences, model_defaults, rewrite


def test_every_default_in_the_yaml_is_the_models_default() -> None:
    # Given the packaged YAML and the defaults of the settings models
    documented = yaml.safe_load(DEFAULTS_FILE.read_text(encoding="utf-8"))

    # Then they agree on every key, and each setting with a default is documented in the YAML
    assert differences(documented, model_defaults()) == []


def test_a_diverging_value_is_named_with_both_values() -> None:
    # Given a YAML that changed one nested default and lost another
    documented: dict[str, Any] = yaml.safe_load(DEFAULTS_FILE.read_text(encoding="utf-8"))
    documented["client"]["timeout_s"] = 999.0
    del documented["quiz"]["options_per_question"]

    # Then both are named, with what each side says
    found = differences(documented, model_defaults())
    assert "client.timeout_s: defaults.yaml 999.0, model 120.0" in found
    assert "quiz.options_per_question: missing from defaults.yaml (model 4)" in found


def test_loaded_settings_with_no_user_layer_are_the_model_defaults() -> None:
    # When the settings load with no environment, file or CLI value
    loaded = Settings.model_validate(yaml.safe_load(DEFAULTS_FILE.read_text(encoding="utf-8")))

    # Then each section equals its model's defaults
    assert loaded.client == type(loaded.client)()
    assert loaded.worker == type(loaded.worker)()
    assert loaded.quiz == type(loaded.quiz)()


def test_the_rewriter_puts_the_models_value_back_and_keeps_the_comments() -> None:
    # Given the YAML with one value edited by hand, away from the model
    original = DEFAULTS_FILE.read_text(encoding="utf-8")
    edited = original.replace("\n  timeout_s: 120 ", "\n  timeout_s: 999 ", 1)
    assert edited != original

    # When it is rewritten from the models
    rewritten = rewrite(edited, model_defaults())

    # Then it is the packaged file again, comments and alignment kept (the value as the model writes it)
    assert rewritten == original.replace("\n  timeout_s: 120 ", "\n  timeout_s: 120.0 ", 1)
