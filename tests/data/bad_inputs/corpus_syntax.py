"""Syntax-level bad model outputs (framing, garbage, truncation, nesting, huge values, NaN/Infinity,
duplicate keys), split out of make_corpus.py to keep each module short."""

from __future__ import annotations

import json
import random
from typing import Any

import yaml
from corpus_common import Case, base_quiz, dumps, edited


def framing(good: bytes) -> list[Case]:
    """Valid output with odd framing that is still the contract's business."""
    cases: list[Case] = []
    add = cases.append
    add(("valid_base", good, "ok", None, None))
    add(("valid_utf8_bom_bytes", b"\xef\xbb\xbf" + good, "ok", None, None))
    add(("valid_pretty_printed", json.dumps(base_quiz(), indent=4).encode(), "ok", None, None))
    add(("valid_ascii_escaped", json.dumps(base_quiz(), ensure_ascii=True).encode(), "ok", None, None))
    return cases


def garbage(rng: random.Random, good: bytes) -> list[Case]:
    """Garbage bytes (draws from ``rng``)."""
    cases: list[Case] = []
    add = cases.append
    for i in range(12):
        noise = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400)))
        add((f"garbage_random_{i:02d}", b"\xff" + noise, "parse", "invalid_utf8", None))
    for i in range(6):
        text = "".join(chr(rng.randrange(0x21, 0x7E)) for _ in range(200)).replace("{", "(").replace("[", "(")
        add((f"garbage_ascii_{i:02d}", ("x" + text).encode(), "parse", None, None))
    add(("garbage_nul_bytes", b"\x00" * 64, "parse", None, None))
    add(
        (
            "garbage_utf16_le_json",
            b"\xff\xfe" + json.dumps(base_quiz()).encode("utf-16-le"),
            "parse",
            "invalid_utf8",
            None,
        )
    )
    add(("garbage_latin1_text", "Café quiz: résumé".encode("latin-1"), "parse", "invalid_utf8", None))
    add(("garbage_overlong_utf8", b'{"title": "\xc0\xaf"}', "parse", "invalid_utf8", None))
    add(("garbage_utf8_surrogate_bytes", b'{"title": "\xed\xa0\x80"}', "parse", "invalid_utf8", None))
    add(("garbage_markdown_fence", b"```json\n" + good + b"\n```", "parse", "invalid_json", None))
    add(("garbage_chatty_prefix", b"Sure! Here is your quiz:\n" + good, "parse", "invalid_json", None))
    add(("garbage_chatty_suffix", good + b"\nLet me know if you need more!", "parse", "invalid_json", None))
    add(("garbage_two_objects", good + good, "parse", "invalid_json", None))
    add(("garbage_python_repr", repr(base_quiz()).encode(), "parse", "invalid_json", None))
    add(("garbage_trailing_comma", good[:-1] + b",}", "parse", "invalid_json", None))
    add(("garbage_js_comment", b"// quiz\n" + good, "parse", "invalid_json", None))
    add(("garbage_html", b"<html><body><h1>Quiz</h1></body></html>", "parse", "invalid_json", None))
    add(("garbage_xml", b"<?xml version='1.0'?><quiz><title>x</title></quiz>", "parse", "invalid_json", None))
    add(("garbage_yaml", yaml.safe_dump(base_quiz()).encode(), "parse", "invalid_json", None))
    add(("garbage_single_quotes", b"{'title': 'Quiz', 'questions': []}", "parse", "invalid_json", None))
    add(("garbage_unquoted_keys", b'{title: "Quiz", questions: []}', "parse", "invalid_json", None))
    add(("garbage_bare_word", b"quiz", "parse", "invalid_json", None))
    add(("garbage_str_bom_inside", "\ufeff".encode() * 2 + good, "parse", None, None))
    return cases


def truncation(good: bytes) -> list[Case]:
    """Truncation and emptiness."""
    cases: list[Case] = []
    add = cases.append
    for cut in (1, 10, 57, 200, 500, len(good) // 2, len(good) - 40, len(good) - 1):
        add((f"truncated_at_{cut}", good[:cut], "truncated", None, None))
    add(("truncated_open_string", b'{"title": "Cellular resp', "truncated", "truncated_json", None))
    add(("truncated_open_true", b'{"title": "x", "flag": tr', "truncated", "truncated_json", None))
    add(("truncated_finish_length_valid_json", good, "truncated", "finish_length", "length"))
    add(("truncated_finish_length_cut", good[:300], "truncated", "finish_length", "length"))
    add(("refusal_content_filter", good, "refusal", "content_filter", "content_filter"))
    add(("refusal_content_filter_empty", b"", "refusal", "content_filter", "content_filter"))
    add(("empty_bytes", b"", "empty", "empty_output", None))
    add(("empty_whitespace", b" \n\t\r\n  ", "empty", "empty_output", None))
    add(("empty_null", b"null", "empty", "empty_output", None))
    add(("empty_object", b"{}", "empty", "empty_output", None))
    add(("empty_no_questions", b'{"title": "Quiz", "questions": []}', "empty", "empty_output", None))
    add(
        (
            "empty_blank_strings",
            b'{"title": "   ", "questions": [{"question": " "}]}',
            "empty",
            "empty_output",
            None,
        )
    )
    add(("empty_nbsp_only", '{"title": "\u00a0\u00a0"}'.encode(), "empty", "empty_output", None))
    return cases


def nesting() -> list[Case]:
    """Deep nesting."""
    cases: list[Case] = []
    add = cases.append
    for depth in (5_000, 50_000):
        add((f"deep_array_{depth}", b"[" * depth + b"]" * depth, "parse", None, None))
        add((f"deep_object_{depth}", b'{"a":' * depth + b"1" + b"}" * depth, "parse", None, None))
        add((f"deep_unclosed_{depth}", b"[" * depth, "parse", None, None))
    for depth in (50, 400, 900):
        nested: Any = "x"
        for _ in range(depth):
            nested = [nested]
        add((f"deep_title_{depth}", dumps(edited(["title"], nested)), "schema", None, None))
        add((f"deep_extra_key_{depth}", dumps({**base_quiz(), "extra": nested}), "schema", None, None))
    return cases


def huge(good: bytes) -> list[Case]:
    """Huge strings and numbers."""
    cases: list[Case] = []
    add = cases.append
    add(
        (
            "huge_index_string_100k_digits",
            dumps(edited(["questions", 0, "correct_answer_index"], "9" * 100_000)),
            "schema",
            None,
            None,
        )
    )
    add(
        (
            "huge_option_count",
            dumps(edited(["questions", 1, "options"], [f"Option {i}" for i in range(5_000)])),
            "rule",
            "option_count",
            None,
        )
    )
    add(
        (
            "huge_question_list",
            dumps(edited(["questions"], base_quiz()["questions"] * 250)),
            "rule",
            "question_count",
            None,
        )
    )
    add(
        (
            "huge_integer_5000_digits",
            b'{"title": "Q", "questions": [], "n": ' + b"9" * 5000 + b"}",
            "parse",
            None,
            None,
        )
    )
    add(
        (
            "huge_integer_index",
            dumps(edited(["questions", 0, "correct_answer_index"], 10**300)),
            "rule",
            "answer_index_out_of_range",
            None,
        )
    )
    add(
        (
            "huge_float_overflow",
            good.replace(b'"correct_answer_index": 0', b'"correct_answer_index": 1e400'),
            "schema",
            None,
            None,
        )
    )
    add(("huge_key", dumps({**base_quiz(), "k" * 100_000: 1}), "schema", "schema_extra_forbidden", None))
    add(("huge_whitespace_padding", b" " * 100_000 + good + b"\n" * 100_000, "ok", None, None))
    add(
        (
            "huge_explanation_wrong_quote",
            dumps(edited(["questions", 2, "source_quote"], "Not in the source. " * 5_000)),
            "rule",
            "quote_not_in_source",
            None,
        )
    )
    return cases


def nonfinite(good: bytes) -> list[Case]:
    """NaN / Infinity."""
    cases: list[Case] = []
    add = cases.append
    for token in (b"NaN", b"Infinity", b"-Infinity"):
        name = token.decode().lstrip("-").lower() + ("_neg" if token.startswith(b"-") else "")
        add(
            (
                f"nonfinite_{name}_index",
                good.replace(b'"correct_answer_index": 0', b'"correct_answer_index": ' + token),
                "parse",
                "non_finite_number",
                None,
            )
        )
        add((f"nonfinite_{name}_root", token, "parse", "non_finite_number", None))
        add(
            (
                f"nonfinite_{name}_nested",
                b'{"title": "Q", "questions": [[' + token + b"]]}",
                "parse",
                "non_finite_number",
                None,
            )
        )
    add(
        (
            "nonfinite_lowercase_nan",
            good.replace(b'"correct_answer_index": 0', b'"correct_answer_index": nan'),
            "parse",
            "invalid_json",
            None,
        )
    )
    return cases


def duplicates(good: bytes) -> list[Case]:
    """Duplicate keys."""
    cases: list[Case] = []
    add = cases.append
    add(("duplicate_title", b'{"title": "A", "title": "B", ' + good[1:], "schema", "duplicate_key", None))
    add(("duplicate_questions", good[:-1] + b', "questions": []}', "schema", "duplicate_key", None))
    add(
        (
            "duplicate_question_field",
            good.replace(
                b'"question": "Where does glycolysis', b'"question": "x?", "question": "Where does glycolysis'
            ),
            "schema",
            "duplicate_key",
            None,
        )
    )
    add(
        (
            "duplicate_index_key",
            good.replace(
                b'"correct_answer_index": 3', b'"correct_answer_index": 0, "correct_answer_index": 3'
            ),
            "schema",
            "duplicate_key",
            None,
        )
    )
    add(
        (
            "duplicate_in_extra_nested",
            good[:-1] + b', "meta": {"a": 1, "a": 2}}',
            "schema",
            "duplicate_key",
            None,
        )
    )
    add(("duplicate_empty_key", good[:-1] + b', "": 1, "": 2}', "schema", "duplicate_key", None))
    return cases


def syntax_cases(rng: random.Random, good: bytes) -> list[Case]:
    """All syntax-level cases, in corpus order; ``rng`` is the shared seeded generator."""
    return [
        *framing(good),
        *garbage(rng, good),
        *truncation(good),
        *nesting(),
        *huge(good),
        *nonfinite(good),
        *duplicates(good),
    ]
