"""What enqueue checks before anything is stored: contract, parameters, policy, input and size.

``admit`` is pure (a policy is a configured name or a file's rules as data), so these run without Redis; the
same refusals
through the producer, the CLI and a real Redis (nothing stored) are in test_job_spec_paths.py.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from suture.config.settings import ModelPrice, QuizRules, Settings, load_settings
from suture.tasks.policy_yaml import rules_from_yaml
from suture.workers.admission import admit, check_request, document_text
from suture.workers.errors import (
    InputTooLarge,
    InvalidJob,
    InvalidParams,
    InvalidPolicy,
    ProducerError,
    UnknownContract,
    UnknownPolicy,
    UnusableInput,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DOCUMENT = "Photosynthesis turns light into chemical energy in the chloroplasts of plant cells. " * 20


@pytest.fixture
def settings() -> Settings:
    return load_settings()


def test_an_admitted_job_stores_complete_params_and_its_policy(settings: Settings) -> None:
    # Given settings whose quiz rule says 3 options
    settings = settings.model_copy(update={"quiz": QuizRules(options_per_question=3)})

    # When a job asks for 5 questions and names no policy
    spec = admit("j1", "quiz", DOCUMENT, settings, params={"questions": 5}).spec

    # Then its spec holds every rule, the settings' included, and the contract's default policy
    # (the quiz's language "auto" is stored as the document's, detected at enqueue)
    rules = QuizRules(options_per_question=3, language="en").model_dump()
    assert spec.params == {"questions": 5, "rules": rules}
    assert (spec.policy, spec.source, spec.spec_version) == ("default", DOCUMENT, 4)


@pytest.mark.parametrize(
    ("contract", "params", "policy", "error", "field", "named"),
    [
        ("essay", {}, None, UnknownContract, "contract", ["'essay'", "known: outline, quiz"]),
        ("quiz", {}, "nosuch", UnknownPolicy, "policy", ["'nosuch'", "default", "full-only"]),
        ("quiz", {"questions": 0}, None, InvalidParams, "questions", ["= 0", "from 1 to 100"]),
        ("quiz", {"questions": 500}, None, InvalidParams, "questions", ["= 500", "from 1 to 100"]),
        ("quiz", {"colour": "red"}, None, InvalidParams, "colour", ["'red'", "known: questions, rules"]),
        (
            "quiz",
            {"rules": {"options_per_question": 1}},
            None,
            InvalidParams,
            "rules",
            ["options_per_question"],
        ),
    ],
)
def test_a_request_no_worker_could_run_is_refused_naming_the_bad_value(
    settings: Settings,
    contract: str,
    params: dict[str, object],
    policy: str | None,
    error: type[InvalidJob],
    field: str,
    named: list[str],
) -> None:
    with pytest.raises(error) as caught:
        check_request(contract, params, policy, settings)
    text = str(caught.value)
    assert caught.value.field == field and all(part in text for part in named), text
    assert isinstance(caught.value, ProducerError) and "\n" not in text


def test_a_policy_that_names_what_the_contract_does_not_declare_is_refused(settings: Settings) -> None:
    pinning = {"steps": [{"mode": "full"}, {"mode": "surgical", "preserve": ["explanation"]}]}
    settings = settings.model_copy(update={"policies": {**settings.policies, "pinning": pinning}})
    with pytest.raises(InvalidPolicy) as caught:
        check_request("quiz", {}, "pinning", settings)
    assert all(name in str(caught.value) for name in ("'pinning'", "'quiz'", "'explanation'"))


def test_a_policy_file_relying_on_an_unkept_invariant_is_refused_at_enqueue() -> None:
    # Given a policy file's rules whose failures step relies on correct_answer_text
    raw = (
        b"steps:\n  - {mode: full}\n  - {mode: surgical, target: failures, preserve: [correct_answer_text]}\n"
    )
    rules = rules_from_yaml("leaky", raw)
    # When a job carries them, Then enqueue refuses it (nothing stored) naming the step and the name
    with pytest.raises(InvalidPolicy) as raised:
        check_request("quiz", {"questions": 15}, "leaky", load_settings(), rules)
    assert "step 2" in str(raised.value) and "'correct_answer_text'" in str(raised.value)
    assert "/questions/*/options" in str(raised.value)


@pytest.mark.parametrize("name", ["/etc/shadow", "../../etc/passwd", "mine.yaml", "/dev/zero"])
def test_a_path_given_as_a_policy_is_an_unknown_policy_and_is_never_opened(
    settings: Settings, name: str
) -> None:
    # Given a path where a policy name goes (the Python and HTTP APIs take names only)
    # When a job names it, Then it is refused as an unknown policy, naming the configured ones...
    opened: list[str] = []
    _OPENS.append(opened)
    try:
        with pytest.raises(UnknownPolicy) as raised:
            admit("0" * 32, "quiz", DOCUMENT, settings, policy=name)
    finally:
        _OPENS.remove(opened)
    # ...and nothing under that name was opened (Python's audit events see every open)
    assert not [path for path in opened if path.endswith(name.lstrip("./"))]
    assert raised.value.field == "policy" and "no such policy" in str(raised.value)
    assert "default" in raised.value.known and "root:" not in str(raised.value)


_OPENS: list[list[str]] = []  # the lists the audit hook records opened paths into, while a test listens


def _record_opens(event: str, args: tuple[object, ...]) -> None:
    if event == "open" and _OPENS and isinstance(args[0], str | bytes | os.PathLike):
        _OPENS[-1].append(os.fsdecode(args[0]))


sys.addaudithook(_record_opens)


def _random_bytes_as_text() -> str:
    return os.urandom(20_000).decode("utf-8", errors="replace")


@pytest.mark.parametrize(
    ("given", "reason"),
    [
        ("", "empty"),
        ("   \n\t ", "empty"),
        ("text with a NUL\x00 inside " * 10, "binary"),
        ("\x01\x02\x03\x04 binary-ish \x05\x06\x07\x08" * 20, "binary"),
        (_random_bytes_as_text(), "binary"),
        (bytes(range(128, 256)).decode("utf-8", errors="replace") * 80, "undecodable"),
        ((EXAMPLES / "plate_tectonics.pdf").read_bytes().decode("latin-1"), "file_format"),
        ((EXAMPLES / "plate_tectonics.pdf").read_bytes().decode("utf-8", errors="replace"), "file_format"),
        ("PK\x03\x04\x14\x00\x06\x00 [Content_Types].xml word/document.xml", "file_format"),
        ("Die Gr\ufffd\ufffde der Zelle h\ufffdngt vom \ufffdu\ufffderen Druck ab. " * 20, "undecodable"),
    ],
    ids=[
        "empty",
        "blank",
        "nul",
        "control",
        "random-bytes",
        "high-bytes",
        "pdf-latin1",
        "pdf-utf8",
        "docx",
        "latin1-as-utf8",
    ],
)
def test_an_input_that_is_no_document_is_refused_with_its_reason(given: str, reason: str) -> None:
    with pytest.raises(UnusableInput) as caught:
        document_text(given)
    assert caught.value.reason == reason and caught.value.field == "input"


def test_bytes_are_read_as_a_text_file_is() -> None:
    # Latin-1 bytes decode (cp1252 fallback, as the batch reader does); a PDF's bytes are refused.
    assert document_text("Größe der Zelle. ".encode("latin-1") * 3) == "Größe der Zelle. " * 3
    with pytest.raises(UnusableInput, match="a PDF file"):
        document_text((EXAMPLES / "plate_tectonics.pdf").read_bytes())


def test_a_stray_replacement_character_in_a_long_text_is_tolerated() -> None:
    assert document_text(DOCUMENT + "\ufffd") == DOCUMENT + "\ufffd"


def test_a_document_larger_than_the_models_context_window_is_refused_with_both_numbers(
    settings: Settings,
) -> None:
    # Given a 1.9 MB document (under max_input_bytes) and the packaged model table (gpt-5-nano: 400,000
    # tokens)
    huge = "Cells divide by mitosis; the spindle pulls the chromatids apart. " * 29_000

    # When it is admitted
    with pytest.raises(InputTooLarge) as caught:
        admit("j1", "quiz", huge, settings)

    # Then the refusal names the prompt's size, the model's room, and the way out
    error = caught.value
    assert error.tokens > 450_000 and error.limit == 400_000 - settings.client.max_completion_tokens
    text = str(error)
    assert f"{error.tokens:,}" in text and "gpt-5-nano's context window (400,000 tokens" in text
    assert "suture batch" in text


def test_max_input_tokens_caps_the_first_prompt(settings: Settings) -> None:
    capped = settings.model_copy(update={"max_input_tokens": 1_000})
    assert admit("j1", "quiz", DOCUMENT, settings).spec.source == DOCUMENT
    with pytest.raises(InputTooLarge, match="over the 1,000 allowed by max_input_tokens"):
        admit("j1", "quiz", DOCUMENT * 3, capped)


def test_a_model_of_unknown_window_is_not_checked_against_one(settings: Settings) -> None:
    prices = {
        "gpt-5-nano": ModelPrice(input_per_1m_usd=0.05, cached_input_per_1m_usd=0.005, output_per_1m_usd=0.4)
    }
    unknown = settings.model_copy(update={"prices": prices})
    big = DOCUMENT * 1_000  # ~400,000 tokens' worth of text, under no configured limit
    assert admit("j1", "quiz", big, unknown).spec.source == big


def test_a_5_mb_document_is_refused_by_max_input_bytes_before_anything_else(settings: Settings) -> None:
    huge = "Cells divide by mitosis; the spindle pulls the chromatids apart. " * 80_000
    with pytest.raises(UnusableInput, match="over max_input_bytes=2,097,152") as caught:
        admit("j1", "quiz", huge, settings)
    assert caught.value.reason == "too_large" and "suture batch" in str(caught.value)


def test_policy_rules_given_as_data_are_checked_like_a_files_and_stored_plain(settings: Settings) -> None:
    import datetime

    # Rules given as data are stored with the job, under the name the caller gave
    rules = {"max_attempts": 1, "steps": [{"mode": "full", "model": "gpt-5-mini"}]}
    spec = admit("0" * 32, "quiz", DOCUMENT, settings, policy="mine", policy_rules=rules).spec
    assert (spec.policy, spec.policy_rules) == ("mine", rules)
    assert spec.stored()["policy_rules"] == rules
    # What is no JSON data, or more than max_policy_file_bytes of it, is refused naming the field, not the
    # value
    secret = "sk-live-" + "x" * 40
    refused: list[dict[str, object]] = [
        {"steps": [{"mode": "full"}], "description": datetime.date(2020, 1, 1)},
        {"steps": [{"mode": "full"}], "description": secret * 2000},
        {"steps": [{"mode": "full", "model": secret, 3: "x"}]},
    ]
    for bad in refused:
        with pytest.raises(InvalidPolicy) as raised:
            admit("0" * 32, "quiz", DOCUMENT, settings, policy="mine", policy_rules=bad)
        assert raised.value.field == "policy_rules" and secret not in str(raised.value)
