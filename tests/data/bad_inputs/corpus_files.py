"""Bad documents and bad configs/policies for the corpus, split out of make_corpus.py to keep each
module short."""

from __future__ import annotations

import random


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
        "wrong_suffix.docx": (text, "unreadable"),  # text named .docx: not a Word file
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
            "prices: {gpt-5-nano: {input_per_1m_usd: -1, cached_input_per_1m_usd: 0, output_per_1m_usd: " "1}}\n",
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
