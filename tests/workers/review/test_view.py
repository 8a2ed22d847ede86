"""The review rendering on its own (pure): failures placed at their question, each question's repairs,
the source quote found in its document, and every untrusted string escaped."""

from __future__ import annotations

from typing import Any

from suture.workers.review.render import ActionForms, render_job
from suture.workers.review.view import build_view, question_index
from tests.fixtures.scripted_model import balanced_question, document, imbalanced_question, repaired_question

HOSTILE = "<script>alert('x')</script>"


def result_with(
    attempts: list[dict[str, Any]], failures: list[dict[str, Any]], status: str
) -> dict[str, Any]:
    questions = [repaired_question(0), balanced_question(1), imbalanced_question(2)]
    questions[1] = questions[1] | {"explanation": HOSTILE}
    return {
        "job_id": "f" * 32,
        "status": status,
        "reason": "retries ran out",
        "output": {"title": f"Quiz {HOSTILE}", "questions": questions},
        "failures": failures,
        "attempts": attempts,
        "cost_usd": 0.001,
        "simulated": True,
        "round": 0,
    }


FAILURE = {"kind": "rule", "pointer": "/questions/2/options", "code": "imbalanced_options", "message": "long"}
ATTEMPTS = [
    {
        "n": 1,
        "mode": "full",
        "model": "gpt-5-nano",
        "outcome": "improved",
        "patch": [],
        "failures": [FAILURE | {"pointer": "/questions/0/options"}, FAILURE],
    },
    {
        "n": 2,
        "mode": "surgical",
        "model": "gpt-5-nano",
        "outcome": "improved",
        "failures": [FAILURE],
        "slices": [
            {
                "pointer": "/questions/0",
                "sent": imbalanced_question(0),
                "received": {"value": repaired_question(0)},
                "status": "applied",
            },
            {
                "pointer": "/questions/2",
                "sent": imbalanced_question(2),
                "received": imbalanced_question(2),
                "status": "rolled_back",
                "detail": "correct_answer_text changed",
            },
        ],
    },
]


def test_failures_sit_at_their_question_and_each_question_has_its_history() -> None:
    view = build_view(result_with(ATTEMPTS, [FAILURE], "soft_delivered"), document(3))
    assert [len(q.failures) for q in view.questions] == [0, 0, 1]
    assert [q.repaired for q in view.questions] == [True, False, False]
    first, second, third = (q.history for q in view.questions)
    assert [(c.n, c.status) for c in first] == [(1, "written"), (2, "applied")]
    assert first[1].before == imbalanced_question(0) and first[1].after == repaired_question(0)
    assert [w["code"] for w in first[1].why] == ["imbalanced_options"]
    assert [(c.n, c.status) for c in second] == [(1, "written")]
    assert third[1].status == "rolled_back" and third[1].detail == "correct_answer_text changed"
    excerpt = view.questions[1].excerpt
    assert excerpt is not None and excerpt.quote == "the study of rivers is topic number 1"
    assert question_index("/questions/12/options/3") == 12 and question_index("/title") is None


def test_the_page_escapes_every_untrusted_string_and_marks_what_it_must() -> None:
    view = build_view(result_with(ATTEMPTS, [FAILURE], "soft_delivered"), document(3) + "\n" + HOSTILE)
    html = render_job(view, actions=ActionForms("/a", "/r", "/c", "t0k"))
    assert HOSTILE not in html and "&lt;script&gt;" in html
    assert html.count('class="question failing') == 1 and html.count('class="correct"') >= 3
    assert 'name="token" value="t0k"' in html and "SIMULATION" in html
    assert render_job(view).count("<form") == 0  # static pages have no actions


def test_an_options_slice_and_a_deterministic_fix_read_as_what_they_changed() -> None:
    # Given question 0 repaired by its option list, then moved by a deterministic fix
    attempts = [
        {
            "n": 1,
            "mode": "full",
            "model": "gpt-5-nano",
            "outcome": "improved",
            "patch": [],
            "failures": [FAILURE | {"pointer": "/questions/0/options"}],
        },
        {
            "n": 2,
            "mode": "surgical",
            "model": "gpt-5-nano",
            "outcome": "improved",
            "failures": [],
            "slices": [
                {
                    "pointer": "/questions/0/options",
                    "sent": imbalanced_question(0)["options"],
                    "received": {"value": repaired_question(0)["options"]},
                    "status": "applied",
                }
            ],
        },
        {
            "n": 3,
            "mode": "fix",
            "model": "fixer",
            "outcome": "valid",
            "failures": [],
            "patch": [{"op": "replace", "path": "/questions/0/correct_answer_index", "value": 1}],
        },
    ]
    view = build_view(result_with(attempts, [], "delivered"), document(3))
    history = view.questions[0].history
    # Then the slice shows the option lists before and after, and the fix what it changed
    assert history[1].before == {"options": imbalanced_question(0)["options"]}
    assert history[1].after == {"options": repaired_question(0)["options"]}
    assert (history[2].status, history[2].changed_fields) == ("fixed", ["correct_answer_index"])
    html = render_job(view)
    assert "surgery replaced its options" in html and "a deterministic fix (no model) changed" in html
