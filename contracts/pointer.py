"""RFC 6901 JSON Pointers over plain JSON values: read, splice and merge slices without mutating inputs.

Surgical repair regenerates the value at a pointer and splices it back; these functions are that
splice. They work on any JSON value (dicts, lists, scalars) nested at any depth, with RFC 6901
escaping (``~0`` is ``~``, ``~1`` is ``/``).

Conventions:

- ``""`` is the whole document; ``"/"`` is the key ``""`` of the root object (per RFC).
- A list index is ``0`` or a digit string without leading zeros; ``-`` (past the end) is rejected
  because a splice replaces a value and never appends.
- ``splice`` may add a missing key to an existing object (a model may have omitted a required
  field), but a list index must already exist.
- Results share unchanged subtrees with their input (only the containers along the path are
  copied, and the spliced value is deep-copied); treat documents as immutable values.

Errors: every bad pointer raises ``suture.contracts.errors.PointerError`` naming the pointer and why.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping
from typing import Any

from jsonpointer import JsonPointer, JsonPointerException, escape

from suture.contracts.errors import PointerError

WILDCARD = "*"


def parse_pointer(pointer: str) -> list[str]:
    """Split a pointer into its unescaped reference tokens (``"/a~1b/0"`` -> ``["a/b", "0"]``)."""
    if not isinstance(pointer, str):
        raise PointerError(repr(pointer), "a JSON pointer must be a string")
    try:
        return list(JsonPointer(pointer).parts)
    except JsonPointerException as exc:
        raise PointerError(pointer, _reason(exc)) from None


def format_pointer(tokens: list[str] | tuple[str | int, ...] | list[str | int]) -> str:
    """Join reference tokens into an escaped pointer (``["a/b", 0]`` -> ``"/a~1b/0"``)."""
    return "".join("/" + escape(str(token)) for token in tokens)


def get(doc: Any, pointer: str) -> Any:
    """The value at ``pointer`` in ``doc`` (the value itself, not a copy)."""
    value = doc
    for token in parse_pointer(pointer):
        value = _child(value, token, pointer)
    return value


def exists(doc: Any, pointer: str) -> bool:
    """True if ``pointer`` is well formed and resolves in ``doc``."""
    try:
        get(doc, pointer)
    except PointerError:
        return False
    return True


def splice(doc: Any, pointer: str, value: Any) -> Any:
    """A new document equal to ``doc`` with the value at ``pointer`` replaced by ``value``."""
    return _splice(doc, parse_pointer(pointer), 0, copy.deepcopy(value), pointer)


def merge(doc: Any, slices: Mapping[str, Any]) -> Any:
    """A new document with every ``{pointer: value}`` slice spliced in.

    Pointers must not overlap (one a prefix of another): which value should win would be
    ambiguous, so that is a ``PointerError``. An empty mapping returns ``doc`` unchanged.
    """
    parsed = {pointer: parse_pointer(pointer) for pointer in slices}
    _reject_overlaps(parsed)
    result = doc
    for pointer, tokens in parsed.items():
        result = _splice(result, tokens, 0, copy.deepcopy(slices[pointer]), pointer)
    return result


def parent(pointer: str) -> str:
    """The pointer of the container holding ``pointer`` (``"/a/0/b"`` -> ``"/a/0"``)."""
    tokens = parse_pointer(pointer)
    if not tokens:
        raise PointerError(pointer, "the whole document has no parent")
    return format_pointer(tokens[:-1])


def join(base: str, relative: str) -> str:
    """Resolve ``relative`` against ``base``: an absolute pointer (``/...``) is returned as is.

    ``relative`` is written in pointer syntax without the leading slash (``"options/2"``);
    ``""`` means ``base`` itself.
    """
    parse_pointer(base)
    if relative.startswith("/"):
        parse_pointer(relative)
        return relative
    joined = f"{base}/{relative}" if relative else base
    parse_pointer(joined)
    return joined


def expand(doc: Any, pattern: str) -> list[str]:
    """Every existing pointer in ``doc`` matching ``pattern``, in document order.

    A ``*`` token matches any key or index at that level; other tokens match literally.
    A pattern without wildcards yields itself if it resolves, else nothing.
    """
    matches: list[str] = []
    _expand(doc, parse_pointer(pattern), [], matches)
    return matches


def is_prefix(ancestor: str, pointer: str) -> bool:
    """True if ``ancestor`` is ``pointer`` or one of its ancestors (token-wise, not textually)."""
    head, tokens = parse_pointer(ancestor), parse_pointer(pointer)
    return tokens[: len(head)] == head


def _expand(value: Any, tokens: list[str], path: list[str], out: list[str]) -> None:
    if not tokens:
        out.append(format_pointer(path))
        return
    token, rest = tokens[0], tokens[1:]
    if token == WILDCARD:
        if isinstance(value, dict):
            children: list[str] = list(value)
        elif isinstance(value, list):
            children = [str(index) for index in range(len(value))]
        else:
            return
        for child in children:
            _expand(value[child] if isinstance(value, dict) else value[int(child)], rest, [*path, child], out)
        return
    try:
        child_value = _child(value, token, "")
    except PointerError:
        return
    _expand(child_value, rest, [*path, token], out)


def _splice(node: Any, tokens: list[str], depth: int, value: Any, pointer: str) -> Any:
    if depth == len(tokens):
        return value
    token = tokens[depth]
    if isinstance(node, dict):
        if depth + 1 < len(tokens) and token not in node:
            raise PointerError(pointer, f"key {token!r} does not exist at {format_pointer(tokens[:depth])!r}")
        new_dict = dict(node)
        new_dict[token] = _splice(node.get(token), tokens, depth + 1, value, pointer)
        return new_dict
    if isinstance(node, list):
        index = _index(node, token, pointer)
        new_list = list(node)
        new_list[index] = _splice(node[index], tokens, depth + 1, value, pointer)
        return new_list
    raise PointerError(
        pointer, f"{format_pointer(tokens[:depth]) or 'the root'} is a {_type(node)}, not a container"
    )


def _child(value: Any, token: str, pointer: str) -> Any:
    if isinstance(value, dict):
        if token not in value:
            raise PointerError(pointer, f"key {token!r} does not exist")
        return value[token]
    if isinstance(value, list):
        return value[_index(value, token, pointer)]
    raise PointerError(pointer, f"cannot step into a {_type(value)} with {token!r}")


def _index(items: list[Any], token: str, pointer: str) -> int:
    if token == "-":
        raise PointerError(pointer, "'-' (past the end of a list) cannot be read or replaced")
    if not token.isdigit() or not token.isascii() or (len(token) > 1 and token[0] == "0"):
        raise PointerError(pointer, f"{token!r} is not a list index")
    index = int(token)
    if index >= len(items):
        raise PointerError(pointer, f"index {index} is out of range for a list of {len(items)}")
    return index


def _reject_overlaps(parsed: dict[str, list[str]]) -> None:
    # Sorted token lists put an ancestor right before its descendants, so neighbours suffice.
    ordered = sorted(parsed.items(), key=lambda item: item[1])
    for (pointer, tokens), (other, other_tokens) in itertools.pairwise(ordered):
        if other_tokens[: len(tokens)] == tokens:
            raise PointerError(other, f"overlaps the slice at {pointer!r} in the same merge")


def _type(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _reason(exc: JsonPointerException) -> str:
    text = str(exc)
    if "must start with" in text:
        return "must be empty or start with '/'"
    return text[:1].lower() + text[1:] if text else "malformed"
