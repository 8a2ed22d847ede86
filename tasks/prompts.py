"""Prompt text for every attempt: task, byte-deterministic retry with feedback, surgical slice; redaction.

Slice prompts are lean: the source excerpt(s) of the slice instead of the whole document (unless the
slice needs it), no context that repeats the slice, compact JSON, and what every slice of a job shares
first so a provider's prompt cache can serve it.

A resumed job's prompts also carry a person's notes in a ``<human_feedback>`` section.

Every builder is a pure function of its inputs, so equal inputs give byte-identical prompts (the
engine relies on that to never send the same prompt to the same model twice). The tags follow the
"Prompt format" section of docs/architecture.md, which the simulator reads.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from suture.contracts.examples import Example
from suture.contracts.failure import Failure

DELTA_INSTRUCTION = "Fix only these problems; keep everything else unchanged."
REDACTED = "[REDACTED]"

Messages = list[dict[str, str]]


def canonical_json(value: Any) -> str:
    """Deterministic JSON: sorted keys; insertion order if keys cannot be sorted; ``repr`` if not JSON."""
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2)
    except TypeError:
        pass
    try:
        return json.dumps(value, ensure_ascii=False, indent=2)
    except (TypeError, ValueError):
        return repr(value)
    except RecursionError:
        return repr(value)


def compact_json(value: Any) -> str:
    """Deterministic JSON without whitespace (slice prompts: every token is paid per slice)."""
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    except TypeError:
        pass
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def document_block(source: str) -> str:
    """The source document, tagged (every prompt carries it)."""
    return f"<document>\n{source}\n</document>"


def example_block(example: Example | None) -> str:
    """An example of the expected output, tagged and labelled as an example (empty if none)."""
    if example is None:
        return ""
    note = " (shortened; [...cut] marks cuts)" if example.truncated else ""
    return f"\n\n<example>\nAn example of the expected shape{note}:\n{example.text}\n</example>"


def failure_lines(failures: Sequence[Failure]) -> str:
    """One line per failure, ``- <pointer>: <message> [<code>]``, in the given order."""
    return "\n".join(f"- {f.pointer or '/'}: {f.message} [{f.code}]" for f in failures)


def human_feedback_block(feedback: Sequence[str]) -> str:
    """A person's feedback on an earlier delivery, tagged and set apart (empty if none).

    ``<`` is escaped so the text cannot close the tag or fake another section of the prompt.
    """
    lines = [line.strip().replace("<", "&lt;") for line in feedback if line.strip()]
    if not lines:
        return ""
    items = "\n".join("- " + line.replace("\n", "\n  ") for line in lines)
    return (
        "\n\n<human_feedback>\nA person reviewed an earlier delivery of this output and asks for the "
        f"following; apply it while keeping every requirement above:\n{items}\n</human_feedback>"
    )


def task_messages(
    instructions: str, source: str, example: Example | None = None, feedback: Sequence[str] = ()
) -> Messages:
    """The first (or feedback-free) prompt of a full attempt."""
    user = document_block(source) + human_feedback_block(feedback) + example_block(example)
    return [{"role": "system", "content": instructions}, {"role": "user", "content": user}]


def retry_prompt(original: str, previous_output: Any, failures: Sequence[Failure]) -> str:
    """The retry text: the original prompt verbatim, the previous output, its failures, the delta
    instruction."""
    return (
        f"{original}\n\n"
        f"<previous_output>\n{canonical_json(previous_output)}\n</previous_output>\n\n"
        f"<failures>\n{failure_lines(failures)}\n</failures>\n\n"
        f"{DELTA_INSTRUCTION}"
    )


def retry_messages(
    instructions: str,
    source: str,
    previous_output: Any,
    failures: Sequence[Failure],
    example: Example | None = None,
    feedback: Sequence[str] = (),
) -> Messages:
    """A full attempt with feedback: the task prompt's user text made into a retry prompt."""
    original = document_block(source)
    user = (
        retry_prompt(original, previous_output, failures)
        + human_feedback_block(feedback)
        + example_block(example)
    )
    return [{"role": "system", "content": instructions}, {"role": "user", "content": user}]


def slice_instructions(title: str) -> str:
    """Default system instructions for a surgical slice (the same for every slice of a job: cached first)."""
    return (
        f"You repair one part of a {title} that failed its checks. You are given the part (the slice), "
        "the item around it, the relevant source excerpt (or the whole document), what is wrong, and "
        'invariants that must hold. Reply with JSON {"value": <the corrected slice>}: the same shape as the '
        "slice, every invariant kept, grounded in the source. Change nothing that is not needed to fix the "
        "listed problems."
    )


@dataclass(frozen=True)
class SliceParts:
    """What one slice prompt says about its target (``suture.tasks.surgery.slice_prompt`` gathers it).

    ``document`` is the whole source, set only when no excerpt serves the slice; ``context`` is the
    item around the slice with the slice itself elided (None when the slice is the whole item).
    """

    pointer: str
    value: Any
    excerpts: tuple[str, ...]
    document: str | None
    context_pointer: str
    context: Any
    failures: Sequence[Failure]
    invariants: Sequence[str]
    feedback: Sequence[str] = ()
    rejected: Sequence[Any] = ()


def slice_messages(instructions: str, parts: SliceParts) -> Messages:
    """One surgical slice prompt, lean: what all slices of a job share first (instructions, then the whole
    document if this slice needs it, then a person's feedback), then the excerpt(s), the slice in compact
    JSON, the item around it without the slice, the failures and the invariants."""
    shared = document_block(parts.document) + "\n\n" if parts.document is not None else ""
    feedback = human_feedback_block(parts.feedback).lstrip("\n")
    shared += feedback + "\n\n" if feedback else ""
    excerpts = "".join(f"<source_excerpt>{text}</source_excerpt>\n\n" for text in parts.excerpts)
    context = ""
    if parts.context is not None:
        context = f'<context pointer="{parts.context_pointer}">{compact_json(parts.context)}</context>\n\n'
    invariant_text = "\n".join(f"- {line}" for line in parts.invariants) or "- (none)"
    user = (
        f"{shared}{excerpts}"
        f'<slice pointer="{parts.pointer}">{compact_json(parts.value)}</slice>\n\n{context}'
        f"<failures>\n{failure_lines(parts.failures)}\n</failures>\n\n"
        f"<invariants>\n{invariant_text}\n</invariants>{rejected_block(parts.rejected)}\n\n"
        f"{DELTA_INSTRUCTION}"
    )
    return [{"role": "system", "content": instructions}, {"role": "user", "content": user}]


def rejected_block(rejected: Sequence[Any]) -> str:
    """Earlier repairs of this slice that did not pass, so the model does not repeat them."""
    if not rejected:
        return ""
    items = "\n".join(compact_json(value) for value in rejected)
    return (
        "\n\n<rejected_repairs>\nThese earlier repairs of this slice still failed the checks; "
        f"do not repeat them:\n{items}\n</rejected_repairs>"
    )


def invariant_lines(pointer: str, preserved: Sequence[tuple[str, Any]]) -> list[str]:
    """Preserve rules stated as invariants: ``<pointer> must stay <value>`` for each preserved path."""
    return [f"{path} must stay exactly {compact_json(value)}" for path, value in preserved]


def redact(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every secret replaced by ``[REDACTED]`` (longest first, so overlaps go whole)."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def redact_messages(messages: Messages, secrets: Sequence[str]) -> Messages:
    """Messages with secrets redacted from every content string."""
    if not secrets:
        return messages
    return [{**m, "content": redact(m["content"], secrets)} for m in messages]
