"""The pure quiz writer on arbitrary documents and slices: never crashes, always well-formed."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.simulator import PROFILES
from workers.simulator.bias import seeded
from workers.simulator.prompt import read_prompt
from workers.simulator.quizgen import write_quiz, write_slice

PROFILE = PROFILES["realistic"]
TRAITS = PROFILE.traits("gpt-5-nano")


@settings(max_examples=60, deadline=None)
@given(document=st.text(max_size=400), questions=st.integers(1, 12), options=st.integers(2, 6))
def test_any_document_gives_a_well_formed_quiz(document: str, questions: int, options: int) -> None:
    # Given any document text and quiz size
    messages = [
        {
            "role": "user",
            "content": f"Write exactly {questions} questions with exactly {options} options.\n<document>\n{document}\n</document>",
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
    content = f'<document>\nCells divide by mitosis in the growing tissue of plants.\n</document>\n<slice pointer="/questions/0">{slice_text}</slice>'
    prompt = read_prompt([{"role": "user", "content": content}], "quiz_slice")
    # When it is answered, Then the reply is a {"value": ...} object
    assert set(write_slice(prompt, TRAITS, PROFILE, seeded(1, slice_text))) == {"value"}


def test_absurd_quiz_sizes_are_bounded() -> None:
    messages = [{"role": "user", "content": "Write exactly 999999999 questions with exactly 1 options."}]
    prompt = read_prompt(messages, "quiz")
    assert (prompt.questions, prompt.options) == (2000, 2)
