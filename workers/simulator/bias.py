"""The structural bias of a simulated model: long correct answers, skewed positions, seeded draws.

The bias is a property of (model, prompt): the same prompt draws the same choices, so retrying
an identical prompt never helps, while any other prompt draws afresh at the model's rate.
"""

from __future__ import annotations

import hashlib
import math
import random
import re

from suture.config.settings import QuizRules
from suture.contracts.quiz_giveaways import overlap
from suture.workers.simulator.document import Document
from suture.workers.simulator.profiles import ModelTraits

_PADDING = (
    "as the document explains in its own words",
    "which is the point the text keeps returning to",
    "according to the passage quoted above",
    "exactly as the source document describes it",
)


def seeded(*parts: object) -> random.Random:
    """A random generator fixed by its parts (seed, model, prompt...): same parts, same draws."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=16).digest()
    return random.Random(int.from_bytes(digest, "big"))


def is_imbalanced(correct: str, distractors: list[str], rules: QuizRules) -> bool:
    """True when the correct option is conspicuously longer than every distractor (the quiz rule)."""
    longest = max((len(d) for d in distractors), default=0)
    return (
        len(correct) > longest * rules.max_correct_length_ratio
        and len(correct) - longest >= rules.min_correct_length_excess_chars
    )


def answer_positions(count: int, options: int, traits: ModelTraits, rng: random.Random) -> list[int]:
    """Where each question's correct answer sits: balanced, then nudged to the favourite slot."""
    positions = [i % options for i in range(count)]
    rng.shuffle(positions)
    favourite = traits.favourite_position % options
    return [favourite if rng.random() < traits.position_skew_rate else p for p in positions]


def long_answer(term: str, sentence: str, longest: int, rules: QuizRules, rng: random.Random) -> str:
    """A correct answer conspicuously longer than ``longest``: the term and its sentence's words."""
    target = max(math.ceil(longest * rules.max_correct_length_ratio * 1.25), longest)
    target = max(target, longest + rules.min_correct_length_excess_chars + 6) + rng.randint(0, 12)
    # Keep the space between the term and the words after it (joining them would glue two words).
    rest = sentence.split(term, 1)[-1].rstrip(".!?")
    tail = (" " if rest[:1].isspace() else "") + " ".join(rest.split())
    answer = term
    for match in re.finditer(r"\s*\S+", tail):
        if len(answer) >= target:
            return answer
        answer += match.group(0)
    while len(answer) < target:
        answer = f"{answer}, {rng.choice(_PADDING)}"
    return answer


def distractors(
    document: Document, correct: str, count: int, rng: random.Random, rules: QuizRules
) -> list[str]:
    """``count`` distinct options from the document's own words, about as long as ``correct``."""
    taken = {correct.casefold()}
    # A model told of give-aways writes no distractor that contains or nearly repeats the answer.
    near = [
        t
        for t in document.terms
        if abs(len(t) - len(correct)) <= 4
        and t.casefold() not in taken
        and overlap(t, correct, rules.distractor_similarity) is None
    ]
    rng.shuffle(near)
    chosen: list[str] = []
    for term in near[:count]:
        chosen.append(term)
        taken.add(term.casefold())
    phrases = _phrases(document, len(correct), count - len(chosen), rng, taken)
    chosen += [p for p in phrases if overlap(p, correct, rules.distractor_similarity) is None]
    chosen += ["Not stated in the document" if i == 0 else f"Option {i}" for i in range(count - len(chosen))]
    if is_imbalanced(correct, chosen, rules):
        shortest = min(range(len(chosen)), key=lambda i: len(chosen[i]))
        chosen[shortest] = _stretch(chosen[shortest], len(correct), rng)
    return chosen


def _phrases(document: Document, length: int, count: int, rng: random.Random, taken: set[str]) -> list[str]:
    """Runs of consecutive words from the document, each about ``length`` characters long."""
    found: list[str] = []
    sentences = document.sentences
    for _ in range(count * 8 if sentences and count > 0 else 0):
        words = rng.choice(sentences).text.rstrip(".!?").split()
        start = rng.randrange(len(words))
        phrase = words[start]
        for word in words[start + 1 :]:
            if len(phrase) >= length - 2:
                break
            phrase = f"{phrase} {word}"
        if abs(len(phrase) - length) <= max(4, length // 4) and phrase.casefold() not in taken:
            taken.add(phrase.casefold())
            found.append(phrase)
            if len(found) == count:
                break
    return found


def _stretch(option: str, length: int, rng: random.Random) -> str:
    while len(option) < length - 4:
        option = f"{option}, {rng.choice(_PADDING)}"
    return option
