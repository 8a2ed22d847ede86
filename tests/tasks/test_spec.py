"""The stored job spec: one model, versioned, read back as written or refused with a clear line."""

from __future__ import annotations

import pytest

from suture.config.settings import QuizRules, Settings
from suture.contracts.registry import resolve_params
from suture.tasks.job import JobState, contract_for
from suture.tasks.spec import SPEC_VERSION, EngineOptions, JobSpec, UnreadableSpec

DOCUMENT = "Photosynthesis turns light into chemical energy. " * 5


def test_a_stored_spec_reads_back_as_the_same_spec_without_the_worker_fields() -> None:
    # Given a spec with complete params, a policy, a callback and a batch
    params = resolve_params("quiz", {"questions": 4}, Settings(quiz=QuizRules(options_per_question=3)))
    spec = JobSpec(
        job_id="j1",
        contract="quiz",
        params=params,
        source=DOCUMENT,
        policy="default",
        callback="https://example.org/hook",
        batch="b1",
        options=EngineOptions(max_completion_tokens=7),
    )

    # When it is stored and read back
    stored = spec.stored()
    read = JobSpec.read("j1", stored)

    # Then it carries its version, and reads back equal but for the worker's fields
    assert stored["spec_version"] == SPEC_VERSION and "options" not in stored and "simulated" not in stored
    assert read == spec.model_copy(update={"options": EngineOptions()})
    assert contract_for(read).options_per_question == 3  # type: ignore[attr-defined]


def test_a_version_1_spec_is_read_as_its_workers_read_it() -> None:
    # Given a spec as the producer of version 1 stored it (document under "input", only questions)
    raw = {"contract": "quiz", "params": {"questions": 3}, "input": DOCUMENT, "policy": None}
    raw |= {"callback": None, "batch": None, "feedback": []}

    # When a worker of this version reads it
    spec = JobSpec.read("j1", raw)

    # Then it is version 1, its document is the source, and the contract's packaged rules judge it
    assert (spec.spec_version, spec.source, spec.params) == (1, DOCUMENT, {"questions": 3})
    assert contract_for(spec).options_per_question == QuizRules().options_per_question  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ({"spec_version": SPEC_VERSION + 1, "source": DOCUMENT}, "not one this worker reads"),
        ({"spec_version": 2, "source": DOCUMENT, "colour": "red"}, "colour: Extra inputs are not permitted"),
        ({"spec_version": 2}, "source: Field required"),
        (["not", "an", "object"], "must be an object"),
    ],
)
def test_a_spec_this_code_cannot_read_is_refused_with_one_line(raw: object, problem: str) -> None:
    with pytest.raises(UnreadableSpec, match=problem) as caught:
        JobSpec.read("j9", raw)
    assert str(caught.value).startswith("job j9: unreadable job spec: ") and "\n" not in str(caught.value)


def test_a_state_stored_before_spec_versions_still_loads() -> None:
    # Given a job state whose spec was written by version 1 (no spec_version, no policy)
    old = {"spec": {"job_id": "j1", "contract": "quiz", "params": {"questions": 3}, "source": DOCUMENT}}

    # When it is loaded
    state = JobState.model_validate(old)

    # Then its spec is version 1 and rebuilds the same contract
    assert state.spec.spec_version == 1 and contract_for(state.spec).questions == 3  # type: ignore[attr-defined]
