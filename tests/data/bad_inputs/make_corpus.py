"""Regenerate the bad-input corpus: model outputs, documents, configs and policies, with manifests.

Run ``.venv/bin/python tests/data/bad_inputs/make_corpus.py`` from the repository root after
changing a case; the files it writes are committed, so tests never depend on this script's run.
Each folder has a ``manifest.yaml`` saying what every case must produce (read by
tests/reliability/test_bad_inputs.py). Deterministic: fixed seeds, no clock.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent

SOURCE = (
    "The mitochondrion is the site of cellular respiration in eukaryotic cells. "
    "Glycolysis takes place in the cytoplasm and splits one glucose molecule into two pyruvate molecules. "
    "The Krebs cycle runs in the mitochondrial matrix and releases carbon dioxide. "
    "Oxidative phosphorylation on the inner membrane produces most of the cell's ATP. "
    "Oxygen is the final electron acceptor of the electron transport chain."
)
QUOTES = [
    "The mitochondrion is the site of cellular respiration",
    "Glycolysis takes place in the cytoplasm",
    "The Krebs cycle runs in the mitochondrial matrix",
    "Oxygen is the final electron acceptor",
]


def base_quiz() -> dict[str, Any]:
    """A valid 4-question quiz of SOURCE (answers at positions 0, 1, 2, 3)."""
    rows = [
        (
            "Where does cellular respiration take place?",
            ["Mitochondrion", "Nucleus", "Ribosome", "Golgi body"],
        ),
        ("Where does glycolysis take place?", ["Nucleus", "Cytoplasm", "Matrix", "Lysosome"]),
        ("Where does the Krebs cycle run?", ["Cytoplasm", "Nucleus", "Mitochondrial matrix", "Cell wall"]),
        ("What is the final electron acceptor?", ["Glucose", "Pyruvate", "Carbon dioxide", "Oxygen"]),
    ]
    questions = []
    for i, (text, options) in enumerate(rows):
        questions.append(
            {
                "question": text,
                "options": options,
                "correct_answer_index": i,
                "correct_answer_text": options[i],
                "explanation": f"The source says: {QUOTES[i]}.",
                "source_quote": QUOTES[i],
            }
        )
    return {"title": "Cellular respiration", "questions": questions}


def dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def edited(path: list[Any], value: Any) -> dict[str, Any]:
    """The base quiz with the value at ``path`` replaced (or deleted when value is ...)."""
    quiz = base_quiz()
    node: Any = quiz
    for key in path[:-1]:
        node = node[key]
    if value is ...:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return quiz


def output_cases() -> list[tuple[str, bytes, str, str | None, str | None]]:
    """(name, raw bytes, expected kind or 'ok', expected code or None, finish_reason)."""
    rng = random.Random(7)
    good = dumps(base_quiz())
    cases: list[tuple[str, bytes, str, str | None, str | None]] = []
    add = cases.append

    # Valid output with odd framing that is still the contract's business.
    add(("valid_base", good, "ok", None, None))
    add(("valid_utf8_bom_bytes", b"\xef\xbb\xbf" + good, "ok", None, None))
    add(("valid_pretty_printed", json.dumps(base_quiz(), indent=4).encode(), "ok", None, None))
    add(("valid_ascii_escaped", json.dumps(base_quiz(), ensure_ascii=True).encode(), "ok", None, None))

    # Garbage bytes.
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

    # Truncation and emptiness.
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

    # Deep nesting.
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

    # Huge strings and numbers.
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

    # NaN / Infinity.
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

    # Duplicate keys.
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

    # Wrong types and shapes.
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

    # Rule failures.
    add(
        (
            "rule_three_questions",
            dumps(edited(["questions"], base_quiz()["questions"][:3])),
            "rule",
            "question_count",
            None,
        )
    )
    add(
        (
            "rule_three_options",
            dumps(edited(["questions", 3, "options"], ["Glucose", "Pyruvate", "Oxygen"])),
            "rule",
            None,
            None,
        )
    )
    add(
        (
            "rule_duplicate_options_case",
            dumps(
                edited(
                    ["questions", 0, "options"], ["Mitochondrion", "mitochondrion ", "Ribosome", "Golgi body"]
                )
            ),
            "rule",
            "duplicate_options",
            None,
        )
    )
    add(
        (
            "rule_index_negative",
            dumps(edited(["questions", 0, "correct_answer_index"], -1)),
            "rule",
            "answer_index_out_of_range",
            None,
        )
    )
    add(
        (
            "rule_index_four",
            dumps(edited(["questions", 0, "correct_answer_index"], 4)),
            "rule",
            "answer_index_out_of_range",
            None,
        )
    )
    add(
        (
            "rule_text_mismatch",
            dumps(edited(["questions", 0, "correct_answer_text"], "Nucleus")),
            "rule",
            "answer_text_mismatch",
            None,
        )
    )
    add(
        (
            "rule_not_a_question",
            dumps(edited(["questions", 0, "question"], "Name the site of respiration.")),
            "rule",
            "not_a_question",
            None,
        )
    )
    add(
        (
            "rule_fullwidth_question_mark",
            dumps(edited(["questions", 0, "question"], "Where does respiration happen？")),
            "rule",
            "not_a_question",
            None,
        )
    )
    add(
        (
            "rule_empty_question_nbsp",
            dumps(edited(["questions", 0, "question"], "\u00a0 ")),
            "rule",
            None,
            None,
        )
    )
    add(
        (
            "rule_all_of_the_above",
            dumps(
                edited(
                    ["questions", 0, "options"], ["Mitochondrion", "Nucleus", "Ribosome", "All of the above"]
                )
            ),
            "rule",
            "all_none_of_the_above",
            None,
        )
    )
    add(
        (
            "rule_quote_not_in_source",
            dumps(edited(["questions", 1, "source_quote"], "Glycolysis happens in the nucleus")),
            "rule",
            "quote_not_in_source",
            None,
        )
    )
    imbalanced = edited(
        ["questions", 0, "options"],
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
    add(
        (
            "rule_blank_option",
            dumps(edited(["questions", 2, "options", 3], "  ")),
            "rule",
            "empty_field",
            None,
        )
    )

    # Unicode edge cases (valid JSON; the quiz stays judged on its merits).
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


def document_cases() -> dict[str, tuple[bytes, str]]:
    """file name -> (bytes, expected: a skip reason code, or 'ok' for a readable document)."""
    text = ("Photosynthesis turns light into sugar in the chloroplast. " * 10).encode()
    rng = random.Random(3)
    from pypdf import PdfWriter

    def pdf(encrypt: bool = False, pages: int = 1) -> bytes:
        import io

        writer = PdfWriter()
        for _ in range(pages):
            writer.add_blank_page(width=200, height=200)
        if encrypt:
            writer.encrypt("secret-password", algorithm="RC4-128")
        buffer = io.BytesIO()
        writer.write(buffer)
        return buffer.getvalue()

    return {
        "empty.txt": (b"", "empty"),
        "whitespace_only.md": (b"   \n\n\t  \n", "empty"),
        "too_short.txt": (b"Too short to quiz.", "too_short"),
        "nul_bytes.txt": (b"Hello\x00world" * 50, "binary"),
        "random_binary.md": (bytes(rng.randrange(256) for _ in range(4000)), "binary"),
        "control_chars.txt": (b"\x01\x02\x03\x04\x05\x06" * 200, "binary"),
        "utf16_bom_bad.txt": (b"\xff\xfe\x00\xd8", "binary"),
        "wrong_suffix.docx": (text, "unsupported"),
        "zero_byte.pdf": (b"", "empty"),
        "not_a_pdf.pdf": (b"This is plain text pretending to be a PDF. " * 20, "unreadable"),
        "truncated.pdf": (pdf()[:120], "unreadable"),
        "blank_pages.pdf": (pdf(pages=3), "no_text"),
        "encrypted.pdf": (pdf(encrypt=True), "encrypted"),
        "duplicate_a.md": (b"# Title\n\n" + text, "ok"),
        "duplicate_b.md": (b"# Title\n\n" + text, "duplicate"),
        "latin1.txt": ("Les cellules végétales captent la lumière. ".encode("latin-1") * 10, "ok"),
        "utf16_with_bom.txt": ("\ufeff".encode("utf-16-le") + text.decode().encode("utf-16-le"), "ok"),
        "headings_only.md": (b"# A\n## B\n### C\n", "too_short"),
        "one_huge_line.txt": (b"word " * 40_000, "ok"),
    }


def config_cases() -> dict[str, tuple[str, str, str]]:
    """file name -> (YAML text, 'settings' or 'policy', a substring the one-line error must contain)."""
    return {
        "settings_bad_yaml.yaml": ("quiz: [unclosed\n", "settings", "invalid configuration"),
        "settings_tabs.yaml": ("quiz:\n\toptions_per_question: 4\n", "settings", "invalid configuration"),
        "settings_not_mapping.yaml": ("- just\n- a list\n", "settings", "invalid configuration"),
        "settings_unknown_key.yaml": ("no_such_setting: 1\n", "settings", "no_such_setting"),
        "settings_negative_retries.yaml": ("max_retries: -1\n", "settings", "max_retries"),
        "settings_retries_too_many.yaml": ("max_retries: 99\n", "settings", "max_retries"),
        "settings_options_string.yaml": (
            "quiz: {options_per_question: four}\n",
            "settings",
            "options_per_question",
        ),
        "settings_ratio_below_one.yaml": (
            "quiz: {max_correct_length_ratio: 0.5}\n",
            "settings",
            "max_correct_length_ratio",
        ),
        "settings_negative_price.yaml": (
            "prices: {gpt-5-nano: {input_per_1m_usd: -1, cached_input_per_1m_usd: 0, output_per_1m_usd: 1}}\n",
            "settings",
            "input_per_1m_usd",
        ),
        "settings_price_missing_field.yaml": (
            "prices: {gpt-x: {input_per_1m_usd: 1}}\n",
            "settings",
            "output_per_1m_usd",
        ),
        "settings_timeout_zero.yaml": ("client: {timeout_s: 0}\n", "settings", "timeout_s"),
        "settings_budget_negative.yaml": ("budget_usd: -0.5\n", "settings", "budget_usd"),
        "settings_latency_negative.yaml": ("simulator: {latency_scale: -2}\n", "settings", "latency_scale"),
        "settings_binary_junk.yaml": ("\x00\x01\x02: \x03\n", "settings", "invalid configuration"),
        "settings_duplicate_anchor.yaml": ("a: &x 1\nb: *y\n", "settings", "invalid configuration"),
        "settings_store_ttl_text.yaml": ("worker: {store_ttl_s: forever}\n", "settings", "store_ttl_s"),
        "policy_bad_yaml.yaml": ("steps: [{mode: full\n", "policy", "not valid YAML"),
        "policy_not_mapping.yaml": ("- mode: full\n", "policy", "must be a mapping"),
        "policy_no_steps.yaml": ("steps: []\n", "policy", "at least one step"),
        "policy_steps_not_list.yaml": ("steps: full\n", "policy", "must be a list"),
        "policy_surgical_first.yaml": (
            "steps: [{mode: surgical, model: gpt-5-nano}]\n",
            "policy",
            "first step must be 'full'",
        ),
        "policy_bad_mode.yaml": ("steps: [{mode: partial}]\n", "policy", "mode"),
        "policy_missing_mode.yaml": ("steps: [{model: gpt-5-nano}]\n", "policy", "is required"),
        "policy_unknown_step_key.yaml": (
            "steps: [{mode: full, temperature: 2}]\n",
            "policy",
            "unknown field",
        ),
        "policy_when_impossible.yaml": (
            "steps: [{mode: full}, {mode: surgical, when: never}]\n",
            "policy",
            "'when'",
        ),
        "policy_max_failures_zero.yaml": (
            "steps: [{mode: full}, {mode: surgical, max_failures: 0}]\n",
            "policy",
            "max_failures",
        ),
        "policy_max_failures_bool.yaml": (
            "steps: [{mode: full}, {mode: surgical, max_failures: true}]\n",
            "policy",
            "max_failures",
        ),
        "policy_bad_effort.yaml": (
            "steps: [{mode: full, reasoning_effort: extreme}]\n",
            "policy",
            "reasoning_effort",
        ),
        "policy_bad_target.yaml": (
            "steps: [{mode: full}, {mode: surgical, target: everything}]\n",
            "policy",
            "target",
        ),
        "policy_preserve_not_list.yaml": (
            "steps: [{mode: full}, {mode: surgical, preserve: x}]\n",
            "policy",
            "preserve",
        ),
        "policy_preserve_empty_pattern.yaml": (
            "steps: [{mode: full}, {mode: surgical, preserve: ['']}]\n",
            "policy",
            "preserve",
        ),
        "policy_empty_model.yaml": ("steps: [{mode: full, model: '  '}]\n", "policy", "model"),
        "policy_max_attempts_zero.yaml": (
            "max_attempts: 0\nsteps: [{mode: full}]\n",
            "policy",
            "max_attempts",
        ),
        "policy_budget_text.yaml": ("budget_usd: cheap\nsteps: [{mode: full}]\n", "policy", "budget_usd"),
        "policy_feedback_text.yaml": ("feedback: sometimes\nsteps: [{mode: full}]\n", "policy", "feedback"),
        "policy_unknown_key.yaml": ("retry: forever\nsteps: [{mode: full}]\n", "policy", "unknown field"),
        "policy_prompt_number.yaml": ("steps: [{mode: full, prompt: 42}]\n", "policy", "prompt"),
        "policy_unknown_model.yaml": ("steps: [{mode: full, model: gpt-9-ultra}]\n", "eval", "has no price"),
        "policy_unknown_model_later.yaml": (
            "steps: [{mode: full}, {mode: full, model: claude-banana}]\n",
            "eval",
            "has no price",
        ),
    }


def write_outputs() -> int:
    folder = HERE / "outputs"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "source.txt").write_text(SOURCE, encoding="utf-8")
    manifest: dict[str, Any] = {}
    for name, raw, kind, code, finish in output_cases():
        if name in manifest:
            raise SystemExit(f"duplicate case {name}")
        (folder / f"{name}.out").write_bytes(raw)
        entry: dict[str, Any] = {"kind": kind}
        if code:
            entry["code"] = code
        if finish:
            entry["finish_reason"] = finish
        manifest[name] = entry
    header = "# model outputs: <name>.out -> the failure kind (and code) Contract.validate must report; ok = valid\n"
    (folder / "manifest.yaml").write_text(header + yaml.safe_dump(manifest, sort_keys=True), encoding="utf-8")
    return len(manifest)


def write_documents() -> int:
    folder = HERE / "documents"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    manifest = {}
    for name, (data, expected) in document_cases().items():
        (folder / name).write_bytes(data)
        manifest[name] = expected
    header = "# documents: file -> the skip reason the document loader must give, or ok (read)\n"
    (folder / "manifest.yaml").write_text(header + yaml.safe_dump(manifest, sort_keys=True), encoding="utf-8")
    return len(manifest)


def write_configs() -> int:
    folder = HERE / "configs"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    manifest = {}
    for name, (text, kind, expected) in config_cases().items():
        (folder / name).write_bytes(text.encode("utf-8"))
        manifest[name] = {"loader": kind, "error_contains": expected}
    header = "# configs and policies: file -> which loader (settings/policy/eval) and what its one-line error says\n"
    (folder / "manifest.yaml").write_text(header + yaml.safe_dump(manifest, sort_keys=True), encoding="utf-8")
    return len(manifest)


if __name__ == "__main__":
    counts = (write_outputs(), write_documents(), write_configs())
    print(f"outputs {counts[0]}, documents {counts[1]}, configs {counts[2]}, total {sum(counts)}")
