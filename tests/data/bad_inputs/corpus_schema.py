"""Schema-level bad model outputs (wrong types and shapes, rule failures, unicode), split out of
make_corpus.py to keep each module short."""

from __future__ import annotations

from typing import Any

from corpus_common import QUOTES, Case, base_quiz, dumps, edited


def wrong_types() -> list[Case]:
    """Wrong types and shapes."""
    cases: list[Case] = []
    add = cases.append
    roots = {"array": [], "array_of_quiz": [base_quiz()], "string": "quiz", "number": 42, "true": True}
    for name, value in roots.items():
        add((f"type_root_{name}", dumps(value), "schema", "schema_model_type", None))
    wrong: dict[str, list[Any]] = {
        "title": [1, None, ["Quiz"], {"t": "Quiz"}, True],
        "questions": ["four", {"0": {}}, 4, None, [1, 2, 3, 4]],
        "question": [1, None, ["Where?"], False],
        "options": ["Mitochondrion, Nucleus", [1, 2, 3, 4], None, {"a": "b"}, [["a"], ["b"], ["c"], ["d"]]],
        "correct_answer_index": ["0", 0.0, True, None, [0], {"i": 0}, 1.5],
        "correct_answer_text": [0, None, ["Mitochondrion"]],
        "explanation": [0, None],
        "source_quote": [0, None, [QUOTES[0]]],
    }
    for field, values in wrong.items():
        for j, value in enumerate(values):
            path: list[Any] = [field] if field in ("title", "questions") else ["questions", 0, field]
            add((f"type_{field}_{j}", dumps(edited(path, value)), "schema", None, None))
    for field in (
        "question",
        "options",
        "correct_answer_index",
        "correct_answer_text",
        "explanation",
        "source_quote",
    ):
        add(
            (
                f"missing_{field}",
                dumps(edited(["questions", 1, field], ...)),
                "schema",
                "schema_missing",
                None,
            )
        )
    add(("missing_title", dumps(edited(["title"], ...)), "schema", "schema_missing", None))
    add(("missing_questions_with_title", dumps(edited(["questions"], ...)), "schema", "schema_missing", None))
    add(
        ("extra_root_key", dumps({**base_quiz(), "notes": "extra"}), "schema", "schema_extra_forbidden", None)
    )
    add(
        (
            "extra_question_key",
            dumps(edited(["questions", 0, "difficulty"], "easy")),
            "schema",
            "schema_extra_forbidden",
            None,
        )
    )
    return cases


def rule(name: str, path: list[Any], value: Any, code: str | None = None) -> Case:
    """A 'rule' case: the base quiz with the value at ``path`` replaced, expecting ``code``."""
    return (name, dumps(edited(path, value)), "rule", code, None)


def rule_failures() -> list[Case]:
    """Rule failures."""
    q0, q1, q2, q3 = (["questions", i] for i in range(4))
    cases: list[Case] = [
        rule("rule_three_questions", ["questions"], base_quiz()["questions"][:3], "question_count"),
        rule("rule_three_options", [*q3, "options"], ["Glucose", "Pyruvate", "Oxygen"]),
        rule(
            "rule_duplicate_options_case",
            [*q0, "options"],
            ["Mitochondrion", "mitochondrion ", "Ribosome", "Golgi body"],
            "duplicate_options",
        ),
        rule("rule_index_negative", [*q0, "correct_answer_index"], -1, "answer_index_out_of_range"),
        rule("rule_index_four", [*q0, "correct_answer_index"], 4, "answer_index_out_of_range"),
        rule("rule_text_mismatch", [*q0, "correct_answer_text"], "Nucleus", "answer_text_mismatch"),
        rule("rule_not_a_question", [*q0, "question"], "Name the site of respiration.", "not_a_question"),
        rule(
            "rule_fullwidth_question_mark",
            [*q0, "question"],
            "Where does respiration happen？",
            "not_a_question",
        ),
        rule("rule_empty_question_nbsp", [*q0, "question"], "\u00a0 "),
        rule(
            "rule_all_of_the_above",
            [*q0, "options"],
            ["Mitochondrion", "Nucleus", "Ribosome", "All of the above"],
            "all_none_of_the_above",
        ),
        rule(
            "rule_quote_not_in_source",
            [*q1, "source_quote"],
            "Glycolysis happens in the nucleus",
            "quote_not_in_source",
        ),
    ]
    add = cases.append
    imbalanced = edited(
        [*q0, "options"],
        [
            "The mitochondrion, the membrane-bound site of cellular respiration in eukaryotes",
            "Nucleus",
            "Ribosome",
            "Golgi body",
        ],
    )
    imbalanced["questions"][0]["correct_answer_text"] = imbalanced["questions"][0]["options"][0]
    add(("rule_imbalanced_options", dumps(imbalanced), "rule", "imbalanced_options", None))
    skewed = base_quiz()
    for q in skewed["questions"]:
        q["options"] = [q["correct_answer_text"], *[o for o in q["options"] if o != q["correct_answer_text"]]]
        q["correct_answer_index"] = 0
    add(("rule_answer_position_skew", dumps(skewed), "rule", "answer_position_skew", None))
    add(rule("rule_blank_option", [*q2, "options", 3], "  ", "empty_field"))
    return cases


def unicode(good: bytes) -> list[Case]:
    """Unicode edge cases (valid JSON; the quiz stays judged on its merits)."""
    cases: list[Case] = []
    add = cases.append
    emoji = base_quiz()
    emoji["title"] = "Cellular respiration 🧬🔬 — 細胞呼吸 — تنفس خلوي"
    add(("unicode_emoji_cjk_rtl_title", dumps(emoji), "ok", None, None))
    add(
        (
            "unicode_escaped_surrogate_pair",
            good.replace(b'"Cellular respiration"', b'"Cell \\ud83e\\uddec"'),
            "ok",
            None,
            None,
        )
    )
    add(
        (
            "unicode_lone_surrogate_escape",
            good.replace(b'"Cellular respiration"', b'"Cell \\ud800 x"'),
            "ok",
            None,
            None,
        )
    )
    add(
        (
            "unicode_nul_escape_in_title",
            good.replace(b'"Cellular respiration"', b'"Cell\\u0000ular"'),
            "ok",
            None,
            None,
        )
    )
    add(
        (
            "unicode_rtl_override_option",
            dumps(edited(["questions", 0, "options", 1], "\u202eNucleus\u202c")),
            "ok",
            None,
            None,
        )
    )
    add(
        (
            "unicode_zero_width_question",
            dumps(edited(["questions", 0, "question"], "\u200b\u200b\u200b")),
            "rule",
            None,
            None,
        )
    )
    add(
        (
            "unicode_combining_marks",
            dumps(edited(["questions", 0, "options", 2], "Ri\u0301bo\u0308some\u0332")),
            "ok",
            None,
            None,
        )
    )
    add(
        (
            "unicode_nfd_vs_nfc_duplicate",
            dumps(edited(["questions", 1, "options"], ["Nucle\u0301us", "Cytoplasm", "Matrix", "Nucléus"])),
            "ok",
            None,
            None,
        )
    )
    add(
        (
            "unicode_nonchar_ufffe",
            dumps(edited(["questions", 0, "options", 3], "Golgi \ufffe\uffff")),
            "ok",
            None,
            None,
        )
    )
    add(
        (
            "unicode_line_separator",
            dumps(edited(["questions", 0, "explanation"], "Line\u2028break\u2029para")),
            "ok",
            None,
            None,
        )
    )
    add(
        (
            "unicode_quote_with_nbsp",
            dumps(edited(["questions", 0, "source_quote"], QUOTES[0].replace(" ", "\u00a0"))),
            "ok",
            None,
            None,
        )
    )
    add(
        (
            "unicode_question_mark_lookalike",
            dumps(edited(["questions", 2, "question"], "Where does the Krebs cycle run\u037e")),
            "rule",
            "not_a_question",
            None,
        )
    )
    add(
        (
            "unicode_control_chars_key",
            dumps({**base_quiz(), "\u0007\u001b": 1}),
            "schema",
            "schema_extra_forbidden",
            None,
        )
    )
    add(
        (
            "unicode_slash_tilde_key",
            dumps({**base_quiz(), "a/b~c": 1}),
            "schema",
            "schema_extra_forbidden",
            None,
        )
    )
    add(("unicode_huge_emoji_string", dumps(edited(["title"], "🧬" * 25_000)), "ok", None, None))
    return cases


def schema_cases(good: bytes) -> list[Case]:
    """All schema-level cases, in corpus order."""
    return [*wrong_types(), *rule_failures(), *unicode(good)]
