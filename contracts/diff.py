"""Differences between two outputs as RFC 6902 JSON Patch operations, for attempt traces.

A trace records what each attempt changed; a patch is compact, standard and replayable.
Bad patches (a path that does not resolve, a failed ``test``) raise ``PointerError``.
"""

from __future__ import annotations

from typing import Any

import jsonpatch
from jsonpointer import JsonPointerException

from contracts.errors import PointerError


def diff(a: Any, b: Any) -> list[dict[str, Any]]:
    """The JSON Patch operations turning ``a`` into ``b`` (``[]`` when they are equal)."""
    return list(jsonpatch.make_patch(a, b).patch)


def apply_patch(doc: Any, ops: list[dict[str, Any]]) -> Any:
    """A new document: ``doc`` with the JSON Patch ``ops`` applied (``doc`` is not modified)."""
    try:
        return jsonpatch.apply_patch(doc, ops, in_place=False)
    except (jsonpatch.JsonPatchException, JsonPointerException) as exc:
        path = next((str(op.get("path", "")) for op in ops if isinstance(op, dict)), "")
        raise PointerError(path, f"patch cannot be applied: {exc}") from None
    except (TypeError, KeyError, AttributeError) as exc:
        raise PointerError("", f"malformed patch: {exc}") from None
