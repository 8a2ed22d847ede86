"""JSON Lines as every reader splits them: one record, one line, whatever characters its strings hold.

``json.dumps(..., ensure_ascii=False)`` escapes CR, LF and the other C0 controls, but leaves U+0085
(NEL), U+2028 (LINE SEPARATOR) and U+2029 (PARAGRAPH SEPARATOR) raw. Python's ``str.splitlines``,
JavaScript before ES2019 and many log shippers break lines there, so a document quoting one of them
would split a record in two. ``dumps_line`` escapes the three (still valid JSON, the same string once
parsed); every JSONL file suture writes goes through it.
"""

from __future__ import annotations

import json
from typing import IO, Any

# Characters some line readers treat as line ends that JSON leaves unescaped.
_LINE_BREAKS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def dumps_line(record: Any) -> str:
    """``record`` as one JSONL line, newline included; UTF-8 text kept readable, line breaks escaped."""
    return json.dumps(record, ensure_ascii=False).translate(_LINE_BREAKS) + "\n"


def write_line(stream: IO[str], record: Any) -> None:
    """Append ``record`` to an open text stream as one JSONL line."""
    stream.write(dumps_line(record))
