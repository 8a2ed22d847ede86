"""Contract-layer speed: validate, diff and merge-with-preserve on 15- to 1,000-question quizzes.

Run ``python -m bench.bench_contracts``; writes the ``## Contracts`` section of docs/benchmarks.md.
Target (issue 2): validate under 1 ms median for 15 questions, and linear growth in quiz size.
"""

from __future__ import annotations

import copy
import sys
from typing import Any

from bench import machine, median_ms, write_section
from suture.contracts.diff import diff
from suture.contracts.preserve import merge_with_preserve
from suture.contracts.quiz import QuizContract
from tests.contracts.quizzes import make_quiz, source_document, text

SIZES = (15, 100, 1000)
SLICES = 3  # questions regenerated per surgical merge, like a typical repair step
PRESERVE = ["correct_answer_index", "correct_answer_text"]


def measure(n: int, repeats: int) -> dict[str, float]:
    """Median milliseconds of each operation for a valid quiz of ``n`` questions with a source."""
    quiz = make_quiz(n)
    raw = text(quiz)
    contract = QuizContract(questions=n, source=source_document(n))
    assert contract.validate(raw).ok, "the benchmark quiz must be valid"
    targets = [f"/questions/{i}" for i in range(0, n, max(1, n // SLICES))][:SLICES]
    slices = {pointer: _repaired(quiz, pointer) for pointer in targets}
    after = merge_with_preserve(quiz, slices, PRESERVE).output
    return {
        "validate": median_ms(lambda: contract.validate(raw), repeats=repeats),
        "diff": median_ms(lambda: diff(quiz, after), repeats=repeats),
        "merge": median_ms(lambda: merge_with_preserve(quiz, slices, PRESERVE), repeats=repeats),
    }


def _repaired(quiz: dict[str, Any], pointer: str) -> dict[str, Any]:
    question = copy.deepcopy(quiz["questions"][int(pointer.rsplit("/", 1)[1])])
    index = question["correct_answer_index"]
    question["options"] = [o if j == index else f"{o} (revised)" for j, o in enumerate(question["options"])]
    return question


def main() -> int:
    """Measure every size, print and record the table; exit 1 if the 15-question target is missed."""
    rows = []
    results = {n: measure(n, repeats=200 if n <= 100 else 30) for n in SIZES}
    for n, r in results.items():
        per_q = r["validate"] / n * 1000
        rows.append(f"| {n} | {r['validate']:.3f} | {per_q:.1f} | {r['diff']:.3f} | {r['merge']:.3f} |")
    small, large = results[SIZES[0]], results[SIZES[-1]]
    growth = (large["validate"] / small["validate"]) / (SIZES[-1] / SIZES[0])
    body = "\n".join(
        [
            f"Machine: {machine()}.",
            "Settings: packaged quiz rules (4 options), source document given (quote rule on); validate "
            "parses "
            f"JSON text; diff and merge replace {SLICES} questions with preserve {PRESERVE}. Median ms.",
            "",
            "| questions | validate ms | validate µs/question | diff ms | merge+preserve ms |",
            "|---:|---:|---:|---:|---:|",
            *rows,
            "",
            f"Target: validate < 1 ms median for 15 questions: "
            f"{'met' if small['validate'] < 1.0 else 'MISSED'} ({small['validate']:.3f} ms). "
            f"Growth 15 -> {SIZES[-1]} questions, per question: x{growth:.2f} (1.0 = linear).",
        ]
    )
    write_section("Contracts", body)
    print(body)
    return 0 if small["validate"] < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
