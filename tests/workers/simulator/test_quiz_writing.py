"""The pure quiz writer on arbitrary documents and slices: never crashes, always well-formed."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from suture.workers.simulator import PROFILES
from suture.workers.simulator.bias import seeded
from suture.workers.simulator.prompt import read_prompt
from suture.workers.simulator.quizgen import write_quiz, write_slice

PROFILE = PROFILES["realistic"]
TRAITS = PROFILE.traits("gpt-5-nano")


@settings(max_examples=60, deadline=None)
@given(document=st.text(max_size=400), questions=st.integers(1, 12), options=st.integers(2, 6))
def test_any_document_gives_a_well_formed_quiz(document: str, questions: int, options: int) -> None:
    # Given any document text and quiz size
    messages = [
        {
            "role": "user",
            "content": f"Write exactly {questions} questions with exactly {options} "
            f"options.\n<document>\n{document}\n</document>",
        }
    ]
    # When the simulated model writes the quiz
    quiz = write_quiz(read_prompt(messages, "quiz"), TRAITS, PROFILE, seeded(0, document))
    # Then it has the asked shape, distinct options, and a consistent answer
    assert len(quiz["questions"]) == questions
    for question in quiz["questions"]:
        assert len(question["options"]) == options
        assert len({o.casefold() for o in question["options"]}) == options
        assert question["options"][question["correct_answer_index"]] == question["correct_answer_text"]
        assert question["question"].endswith("?")


@settings(max_examples=60, deadline=None)
@given(
    slice_text=st.one_of(
        st.text(max_size=80),
        st.builds(
            json.dumps,
            st.recursive(
                st.none() | st.integers() | st.text(max_size=10),
                lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
            ),
        ),
    )
)
def test_any_slice_content_gets_a_value_reply(slice_text: str) -> None:
    # Given a surgical request whose slice holds arbitrary (possibly broken) content
    content = (
        "<document>\nCells divide by mitosis in the growing tissue of plants.\n</document>\n<slice "
        f'pointer="/questions/0">{slice_text}</slice>'
    )
    prompt = read_prompt([{"role": "user", "content": content}], "quiz_slice")
    # When it is answered, Then the reply is a {"value": ...} object
    assert set(write_slice(prompt, TRAITS, PROFILE, seeded(1, slice_text))) == {"value"}


def test_absurd_quiz_sizes_are_bounded() -> None:
    messages = [{"role": "user", "content": "Write exactly 999999999 questions with exactly 1 options."}]
    prompt = read_prompt(messages, "quiz")
    assert (prompt.questions, prompt.options) == (2000, 2)


SHORT = (
    "The French Revolution began in 1789, when the Estates-General met at Versailles. "
    "The Bastille fell in July, and the National Assembly abolished feudal privileges in August. "
    "The Declaration of the Rights of Man proclaimed liberty, equality and the sovereignty of the nation. "
    "In 1792 the monarchy was abolished; the king was tried and executed the following January. "
    "The Terror of 1793 and 1794, led by the Committee of Public Safety, ended with the fall of Robespierre. "
    "The Directory governed from 1795, until Napoleon Bonaparte seized power in the coup of Brumaire."
)


def _quiz_prompt(document: str, questions: int) -> list[dict[str, str]]:
    content = (
        f"Write exactly {questions} questions with exactly 4 options.\n<document>\n{document}\n</document>"
    )
    return [{"role": "user", "content": content}]


def test_a_short_document_is_quizzed_on_clauses_before_any_question_repeats() -> None:
    # Given a document of six sentences and a model that never repeats itself by chance
    from dataclasses import replace

    from suture.contracts.quiz import QuizContract

    traits = replace(TRAITS, duplicate_rate=0.0)
    # When it is asked for more questions than it has sentences, but not more than its clauses allow
    quiz = write_quiz(read_prompt(_quiz_prompt(SHORT, 10), "quiz"), traits, PROFILE, seeded(0, "short"))
    verdict = QuizContract(10, source=SHORT).validate(json.dumps(quiz))
    # Then no question repeats another, and every quote is still verbatim
    assert "duplicate_question" not in verdict.codes() and "quote_not_in_source" not in verdict.codes()
    # ...while asking for far more questions than the text holds repeats questions, as a model would
    many = write_quiz(read_prompt(_quiz_prompt(SHORT, 40), "quiz"), traits, PROFILE, seeded(0, "short"))
    assert "duplicate_question" in QuizContract(40, source=SHORT).validate(json.dumps(many)).codes()


def test_a_surgical_slice_told_of_a_duplicate_asks_about_another_sentence() -> None:
    # Given a quiz whose second question repeats the first, and the contract's failure for it
    from suture.contracts.quiz import QuizContract
    from suture.tasks.prompts import canonical_json, failure_lines

    document = SHORT + " Napoleon Bonaparte later crowned himself emperor of the French in 1804."
    contract = QuizContract(2, source=document)
    first = {
        "question": 'Which term completes this statement from the document: "The Directory governed from '
        '1795, until _____ Bonaparte seized power in the coup of Brumaire."?',
        "options": ["Napoleon", "Robespierre", "Versailles", "Bastille"],
        "correct_answer_index": 0,
        "correct_answer_text": "Napoleon",
        "explanation": "The document names him.",
        "source_quote": "The Directory governed from 1795, until Napoleon Bonaparte seized power",
    }
    failures = contract.validate(json.dumps({"title": "t", "questions": [first, dict(first)]})).failures
    assert [(f.code, f.pointer) for f in failures] == [("duplicate_question", "/questions/1")]
    content = (
        f"<document>\n{document}\n</document>\n\n"
        f'<slice pointer="/questions/1">{canonical_json(first)}</slice>\n\n'
        f'<context pointer="/questions/1">{canonical_json(first)}</context>\n\n'
        f"<failures>\n{failure_lines(failures)}\n</failures>"
    )
    perfect = PROFILES["perfect"]
    # When the simulated model repairs the slice
    reply = write_slice(
        read_prompt([{"role": "user", "content": content}], "quiz_slice"),
        perfect.traits("gpt-5-nano"),
        perfect,
        seeded(2),
    )
    repaired = reply["value"]
    # Then the question is asked about the other sentence naming the same answer, which it keeps
    assert repaired["correct_answer_text"] == "Napoleon" and "emperor" in repaired["question"]
    verdict = contract.validate(json.dumps({"title": "t", "questions": [first, repaired]}))
    assert verdict.ok, verdict.failures


def test_a_duplicate_whose_answer_is_named_nowhere_else_is_reworded_around_it() -> None:
    # Given a repeated question whose answer occurs in one sentence only, and the perfect profile
    from suture.contracts.quiz import QuizContract
    from suture.tasks.prompts import canonical_json, failure_lines

    quote = "The storming of the Tuileries palace ended the reign of the last king of France in August."
    document = f"{SHORT} {quote}"
    first = {
        "question": "Which term completes this statement from the document: "
        f'"{quote.replace("Tuileries", "_____")}"?',
        "options": ["Tuileries", "Thermidor", "Versailles", "Bastille"],
        "correct_answer_index": 0,
        "correct_answer_text": "Tuileries",
        "explanation": "The document names the coup.",
        "source_quote": quote,
    }
    contract = QuizContract(2, source=document)
    failures = contract.validate(json.dumps({"title": "t", "questions": [first, dict(first)]})).failures
    content = (
        f"<document>\n{document}\n</document>\n\n"
        f'<slice pointer="/questions/1">{canonical_json(first)}</slice>\n\n'
        f"<failures>\n{failure_lines(failures)}\n</failures>"
    )
    prompt = read_prompt([{"role": "user", "content": content}], "quiz_slice")
    # When the model repairs it, Then it keeps answer and quote and asks in other words around the term
    repaired = write_slice(prompt, TRAITS, PROFILES["perfect"], seeded(3))["value"]
    assert repaired["correct_answer_text"] == "Tuileries" and repaired["source_quote"] == quote
    assert "fills the gap" in repaired["question"] and "of the _____ palace" in repaired["question"]
    assert contract.validate(json.dumps({"title": "t", "questions": [first, repaired]})).ok
