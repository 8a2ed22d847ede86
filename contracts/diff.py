"""Differences between two outputs as RFC 6902 JSON Patch operations, for attempt traces.

A trace records what each attempt changed; a patch is compact, standard and replayable.
Bad patches (a path that does not resolve, a failed ``test``) raise ``PointerError``.

Patches are applied with ``jsonpatch``; they are made by a structural walk here instead of
``jsonpatch.make_patch``, whose search for moved list items cost about 3 ms per surgical merge of
a 4-question quiz (a fifth of the merge task's CPU in ``bench/bench_celery.py``'s profile) and
buys nothing for a trace: a repaired question is replaced in place, never moved. The walk emits
``add``/``remove``/``replace`` only, at the deepest path that differs.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
from jsonpointer import JsonPointerException

from suture.contracts.errors import PointerError


def diff(a: Any, b: Any) -> list[dict[str, Any]]:
    """The JSON Patch operations turning ``a`` into ``b`` (``[]`` when they are equal)."""
    ops: list[dict[str, Any]] = []
    _walk(a, b, "", ops)
    return ops


def _walk(a: Any, b: Any, path: str, ops: list[dict[str, Any]]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        _walk_object(a, b, path, ops)
    elif isinstance(a, list) and isinstance(b, list):
        _walk_array(a, b, path, ops)
    elif not _same(a, b):
        ops.append({"op": "replace", "path": path, "value": copy.deepcopy(b)})


def _walk_object(a: dict[str, Any], b: dict[str, Any], path: str, ops: list[dict[str, Any]]) -> None:
    for key in a:
        if key not in b:
            ops.append({"op": "remove", "path": f"{path}/{_escape(key)}"})
    for key, value in b.items():
        if key in a:
            _walk(a[key], value, f"{path}/{_escape(key)}", ops)
        else:
            ops.append({"op": "add", "path": f"{path}/{_escape(key)}", "value": copy.deepcopy(value)})


def _walk_array(a: list[Any], b: list[Any], path: str, ops: list[dict[str, Any]]) -> None:
    for index in range(min(len(a), len(b))):
        _walk(a[index], b[index], f"{path}/{index}", ops)
    for index in range(len(a) - 1, len(b) - 1, -1):  # from the end, so each index is still valid
        ops.append({"op": "remove", "path": f"{path}/{index}"})
    for index in range(len(a), len(b)):
        ops.append({"op": "add", "path": f"{path}/{index}", "value": copy.deepcopy(b[index])})


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values: ``true``, ``1`` and ``1.0`` are three different values."""
    return type(a) is type(b) and a == b


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def apply_patch(doc: Any, ops: list[dict[str, Any]]) -> Any:
    """A new document: ``doc`` with the JSON Patch ``ops`` applied (``doc`` is not modified)."""
    try:
        return jsonpatch.apply_patch(doc, ops, in_place=False)
    except (jsonpatch.JsonPatchException, JsonPointerException) as exc:
        path = next((str(op.get("path", "")) for op in ops if isinstance(op, dict)), "")
        raise PointerError(path, f"patch cannot be applied: {exc}") from None
    except (TypeError, KeyError, AttributeError) as exc:
        raise PointerError("", f"malformed patch: {exc}") from None
