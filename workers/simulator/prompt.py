"""What the simulator reads from a chat request, following the shared prompt format.

A model would understand the prompt; the simulator, to stay deterministic, relies on the tags
of docs/architecture.md ("Prompt format"): ``<document>``, "Write exactly N questions",
"exactly K options", and for surgical slices ``<slice pointer=...>`` / ``<context pointer=...>`` (the item
around the slice, the slice itself elided), ``<source_excerpt>`` (the source, when no ``<document>``) and
the ``[code]`` that ends each line of ``<failures>``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_DOCUMENT = re.compile(r"<document>\n?(.*?)\n?</document>", re.DOTALL)
_QUESTIONS = re.compile(r"Write exactly (\d+) questions", re.IGNORECASE)
_OPTIONS = re.compile(r"exactly (\d+) options", re.IGNORECASE)
_SLICE = re.compile(r'<slice pointer="([^"]*)">(.*?)</slice>', re.DOTALL)
_CONTEXT = re.compile(r'<context pointer="([^"]*)">(.*?)</context>', re.DOTALL)
_FAILURES = re.compile(r"<failures>(.*?)</failures>", re.DOTALL)
_CODE = re.compile(r"\[([a-z_]+)\]\s*$", re.MULTILINE)
_EXCERPT = re.compile(r"<source_excerpt>(.*?)</source_excerpt>", re.DOTALL)
MAX_QUESTIONS = 2000  # a prompt asking for more gets this many: the server must not be stalled
MAX_OPTIONS = 26


@dataclass(frozen=True)
class Prompt:
    """The parts of one request that decide the simulated answer."""

    text: str  # every message's content, joined: the identity of the prompt
    document: str
    questions: int | None
    options: int | None
    slice_pointer: str | None
    slice_value: Any
    context: Any
    failure_codes: frozenset[str] = frozenset()  # the ``[code]`` of each line of ``<failures>``

    @property
    def is_slice(self) -> bool:
        """True for a surgical request that wants ``{"value": <slice>}`` back."""
        return self.slice_pointer is not None


def message_text(content: Any) -> str:
    """The text of one message's content (a string, or a list of text parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def read_prompt(messages: list[dict[str, Any]], schema_name: str) -> Prompt:
    """Read the document, the quiz size and any slice request out of the messages."""
    text = "\n".join(f"{m.get('role', '')}: {message_text(m.get('content'))}" for m in messages)
    user_text = "\n".join(message_text(m.get("content")) for m in messages if m.get("role") == "user")
    document_match = _DOCUMENT.search(text)
    excerpts = [m.group(1) for m in _EXCERPT.finditer(text) if m.group(1).strip()]
    # A lean slice prompt carries excerpts instead of the document; with neither, the user's words
    # are the only source there is.
    fallback = "\n".join(excerpts) if excerpts else user_text
    document = document_match.group(1) if document_match else fallback
    slice_match = _SLICE.search(text) if schema_name.endswith("_slice") else None
    context_match = _CONTEXT.search(text)
    return Prompt(
        text=text,
        document=document,
        questions=_bounded(_int(_QUESTIONS, text), 1, MAX_QUESTIONS),
        options=_bounded(_int(_OPTIONS, text), 2, MAX_OPTIONS),
        slice_pointer=slice_match.group(1) if slice_match else None,
        slice_value=_json(slice_match.group(2)) if slice_match else None,
        context=_json(context_match.group(2)) if context_match else None,
        failure_codes=_failure_codes(text),
    )


def _failure_codes(text: str) -> frozenset[str]:
    block = _FAILURES.search(text)
    return frozenset(_CODE.findall(block.group(1))) if block else frozenset()


def _int(pattern: re.Pattern[str], text: str) -> int | None:
    match = pattern.search(text)
    return int(match.group(1)) if match else None


def _bounded(value: int | None, low: int, high: int) -> int | None:
    return None if value is None else min(max(value, low), high)


def _json(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None
