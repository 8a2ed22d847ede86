"""Retry policies from YAML and Python: loaded, bounded, and rejected with the step and field named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from suture.config.settings import Settings, load_settings
from suture.contracts.failure import Failure
from suture.tasks.policy import Policy, PolicyError, Step, StepContext, load_policy, policy_from_mapping
from suture.tasks.policy_yaml import rules_from_yaml


@pytest.fixture(scope="module")
def settings() -> Settings:
    return load_settings()


def test_default_policy_loads_from_settings(settings: Settings) -> None:
    policy = load_policy(None, settings)
    assert policy.name == "default"
    assert [s.mode for s in policy.steps] == ["full", "surgical", "surgical", "surgical", "full", "surgical"]
    assert [s.model for s in policy.steps][:4] == ["gpt-5-nano", "gpt-5-nano", "gpt-5-nano", "gpt-5-mini"]
    # Six steps: a first try and five retries, the most the settings allow (max_retries 0-5).
    assert policy.attempt_cap == 6
    # The policy chooses steps only: what a repair keeps is the contract's (Contract.invariants).
    assert all(step.preserve == () for step in policy.steps)
    # The first surgical pass regenerates the smallest failing paths
    assert policy.steps[1].target == "smallest"
    assert policy.fixers and not load_policy("full-only", settings).fixers
    assert policy.attempt_cap == len(policy.steps)


def test_policy_builds_from_a_yaml_files_text(settings: Settings) -> None:
    raw = b"feedback: false\nmax_attempts: 2\nsteps:\n  - {mode: full, model: gpt-5-mini}\n"
    rules = rules_from_yaml("mine", raw)
    policy = policy_from_mapping("mine", rules, settings)
    assert (policy.name, policy.feedback, policy.max_attempts) == ("mine", False, 2)
    assert policy.steps[0].model == "gpt-5-mini"


def test_load_policy_takes_names_only_and_opens_no_path(settings: Settings, tmp_path: Path) -> None:
    # Given a valid policy file on disk
    path = tmp_path / "mine.yaml"
    path.write_text("steps:\n  - {mode: full}\n")
    # When its path is given where a policy name goes, Then it is an unknown name (nothing is read)
    for name in (str(path), "/etc/shadow"):
        with pytest.raises(PolicyError) as caught:
            load_policy(name, settings)
        assert caught.value.field == "name" and "no such policy" in str(caught.value)


@pytest.mark.parametrize("retries", [0, 2, 5])
def test_a_policy_without_steps_gets_max_retries_full_retries(retries: int) -> None:
    settings = load_settings(overrides={"max_retries": retries})
    policy = policy_from_mapping("plain", {"model": "gpt-5-mini"}, settings)
    assert len(policy.steps) == 1 + retries
    assert {s.model for s in policy.steps} == {"gpt-5-mini"}


@pytest.mark.parametrize(
    ("data", "step", "field"),
    [
        ({"steps": [{"mode": "full"}, {"mode": "sideways"}]}, "step 2", "mode"),
        ({"steps": [{"mode": "full", "reasoning_effort": "extreme"}]}, "step 1", "reasoning_effort"),
        ({"steps": [{"mode": "full"}, {"mode": "surgical", "target": "everything"}]}, "step 2", "target"),
        ({"steps": [{"mode": "full"}, {"mode": "surgical", "max_failures": 0}]}, "step 2", "max_failures"),
        ({"steps": [{"mode": "full"}, {"mode": "surgical", "preserve": "x"}]}, "step 2", "preserve"),
        ({"steps": [{"mode": "full", "colour": "red"}]}, "step 1", "colour"),
        ({"steps": [{"model": "gpt-5-nano"}]}, "step 1", "mode"),
        ({"steps": [{"mode": "surgical"}]}, "step 1", "mode"),
        ({"steps": [{"mode": "full", "model": ""}]}, "step 1", "model"),
        ({"steps": []}, "policy", "steps"),
        ({"steps": [{"mode": "full"}], "max_attempts": 0}, "policy", "max_attempts"),
        ({"steps": [{"mode": "full"}], "max_attempts": -1}, "policy", "max_attempts"),
        ({"steps": [{"mode": "full"}], "budget_usd": 0}, "policy", "budget_usd"),
        ({"steps": [{"mode": "full"}], "feedback": "yes"}, "policy", "feedback"),
        ({"steps": [{"mode": "full"}], "retries": 3}, "policy", "retries"),
        (["not", "a", "mapping"], "policy", "policy"),
    ],
)
def test_invalid_policies_are_rejected_naming_step_and_field(
    settings: Settings, data: Any, step: str, field: str
) -> None:
    with pytest.raises(PolicyError) as caught:
        policy_from_mapping("bad", data, settings)
    assert f"{step}, field {field!r}" in str(caught.value)
    assert caught.value.field == field


def test_unknown_policy_name_lists_the_configured_ones(settings: Settings) -> None:
    with pytest.raises(PolicyError, match="configured: default, full-only"):
        load_policy("nope", settings)


def test_invalid_yaml_file_is_a_policy_error_naming_the_place() -> None:
    with pytest.raises(PolicyError, match="not valid YAML at line 2, column 1"):
        rules_from_yaml("broken", b"steps: [unclosed\n")


SECRET = "sk-live-4f9c2d7e8a1b6c3d5e0f"


@pytest.mark.parametrize(
    "text",
    [
        f"budget_usd: {SECRET}\nsteps: [{{mode: full}}]\n",
        f"steps: [{{mode: {SECRET}}}]\n",
        f"steps: [{{mode: full, model: gpt-5-nano, target: {SECRET}}}]\n",
        f"steps: [{{mode: full, reasoning_effort: {SECRET}}}]\n",
        f"feedback: {SECRET}\nsteps: [{{mode: full}}]\n",
        f"{SECRET}: 1\nsteps: [{{mode: full}}]\n",
        f"steps: [{{mode: full, {SECRET}: x}}]\n",
        f"{SECRET}\n",
        f"steps: [{{mode: full}}, {{mode: surgical, preserve: [{SECRET}]}}]\n",
        f"steps: [{{mode: full}}]\nmax_attempts: {SECRET}\n",
        f"steps: [\n  {SECRET}: [unclosed\n",
        f'steps: "{SECRET}\n',
        f"root:{SECRET}:20228:0:99999:7:::\n_apt:*:20228:0:99999:7:::\n",
    ],
)
def test_a_policy_files_secret_never_appears_in_its_error(settings: Settings, text: str) -> None:
    from suture.contracts.quiz import QuizContract
    from suture.tasks.policy_choice import check_fit

    # Given a policy file whose bad value (or key, or line) is a secret
    # When it is parsed, built and fitted to the quiz contract
    with pytest.raises(PolicyError) as caught:
        policy = policy_from_mapping("mine", rules_from_yaml("mine", text.encode()), settings)
        check_fit(policy, QuizContract)
    # Then the one-line error names the field and the expected type, never the secret
    message = str(caught.value)
    assert SECRET not in message and "sk-live" not in message and "\n" not in message
    assert "field" in message


def test_a_yaml_alias_bomb_is_refused_by_its_size() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 12)]
    with pytest.raises(PolicyError, match="more than"):
        rules_from_yaml("bomb", "\n".join(lines).encode())


def _failure(kind: Any = "rule", pointer: str = "/questions/1/options") -> Failure:
    return Failure(kind=kind, pointer=pointer, code="c", message="m")


@pytest.mark.parametrize(
    ("failures", "holds"),
    [
        ([_failure()] * 2, True),
        ([_failure()] * 3, False),  # more than max_failures
        ([_failure(), _failure("rule", "/")], False),  # not all targetable
        ([], False),  # nothing to repair
    ],
)
def test_surgical_step_default_when(failures: list[Failure], holds: bool) -> None:
    step = Step(mode="surgical", max_failures=2)
    ctx = StepContext(failures=tuple(failures), output={}, attempts_made=1, spent_usd=0.0)
    assert step.holds(ctx) is holds


def test_python_policies_take_callables_for_when_target_and_prompt() -> None:
    step = Step(
        mode="surgical",
        when=lambda ctx: ctx.attempts_made < 3,
        target=lambda ctx: ["/questions/0"],
        prompt=lambda default: default + " Be brief.",
    )
    policy = Policy(name="py", steps=(Step(mode="full"), step))
    ctx = StepContext(failures=(), output={}, attempts_made=1, spent_usd=0.0)
    assert policy.steps[1].holds(ctx)
    assert policy.steps[1].instructions("Repair.") == "Repair. Be brief."
    with pytest.raises(PolicyError, match="field 'when'"):
        Policy(name="py", steps=(Step(mode="full"), Step(mode="surgical", when="always")))  # type: ignore[arg-type]


def test_a_policy_naming_an_invariant_the_contract_declares_fits(settings: Settings) -> None:
    from suture.contracts.quiz import QuizContract
    from suture.tasks.policy_choice import check_fit

    policy = policy_from_mapping(
        "old-style",
        {
            "steps": [
                {"mode": "full"},
                {"mode": "surgical", "target": "parent", "preserve": ["correct_answer_text"]},
            ]
        },
        settings,
    )
    check_fit(policy, QuizContract)  # no error: the quiz keeps it under every question it repairs


def test_a_policy_naming_what_the_contract_does_not_declare_is_refused_in_one_line(
    settings: Settings,
) -> None:
    from suture.contracts.quiz import QuizContract
    from suture.tasks.policy_choice import PolicyMismatch, check_fit

    # Given a policy whose surgical step pins a value the quiz contract does not declare
    policy = policy_from_mapping(
        "pinning", {"steps": [{"mode": "full"}, {"mode": "surgical", "preserve": ["explanation"]}]}, settings
    )

    # When it is checked against the quiz contract
    with pytest.raises(PolicyMismatch) as caught:
        check_fit(policy, QuizContract)

    # Then the one line names the policy, the contract and the unknown name
    text = str(caught.value)
    assert "'pinning'" in text and "'quiz'" in text and "'explanation'" in text and "\n" not in text


def test_settings_whose_policy_does_not_fit_are_refused_at_load(settings: Settings) -> None:
    from suture.tasks.policy_choice import PolicyMismatch, check_configured_policies

    bad = settings.model_copy(
        update={
            "policies": {
                **settings.policies,
                "pinning": {"steps": [{"mode": "full"}, {"mode": "surgical", "preserve": ["explanation"]}]},
            }
        }
    )
    assert check_configured_policies(settings) is settings
    with pytest.raises(PolicyMismatch, match="pinning"):
        check_configured_policies(bad)


def test_a_job_runs_its_policy_else_the_settings_else_its_contracts(settings: Settings) -> None:
    from suture.tasks.policy_choice import policy_name

    assert policy_name("full-only", "quiz", settings) == "full-only"
    assert (
        policy_name(None, "quiz", settings.model_copy(update={"default_policy": "full-only"})) == "full-only"
    )
    assert policy_name(None, "quiz", settings) == "default"  # settings.default_policy is null by default
