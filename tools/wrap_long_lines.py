"""Wrap comment and docstring lines longer than the formatter's line length; code is left to ruff format.

A helper for keeping E501 on: ``ruff format`` splits code but never prose. Each full-line comment
and each docstring line past the limit is re-flowed onto as many lines as it needs, with the same
indentation (and ``#`` prefix), breaking only between words; a long one-line string literal in code is
split between words into adjacent literals (``"a b"`` -> ``"a " "b"``, one value), which ``ruff format``
then lays out. Lines it cannot break (one long word, a URL, a line inside a triple-quoted string) are
listed for a hand: ``python -m tools.wrap_long_lines FILES``, then ``ruff format``.
"""

from __future__ import annotations

import ast
import io
import re
import sys
import textwrap
import tokenize
from pathlib import Path

LIMIT = 110
QUOTES = ('r"""', '"""', "r'''", "'''")


def docstring_lines(source: str) -> set[int]:
    """The 1-based line numbers inside docstrings (module, class and function)."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            value = first.value if isinstance(first, ast.Expr) else None
            if first is not None and isinstance(value, ast.Constant) and isinstance(value.value, str):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def _wrap(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width=width, break_long_words=False, break_on_hyphens=False)


def wrap_comment(indent: str, stripped: str) -> list[str] | None:
    """A full-line comment re-flowed onto as many comment lines as it needs."""
    body = stripped.lstrip("#")
    prefix = indent + stripped[: len(stripped) - len(body)] + " "
    wrapped = _wrap(body.strip(), LIMIT - len(prefix))
    if not wrapped or any(len(prefix + part) > LIMIT for part in wrapped):
        return None
    return [prefix + part for part in wrapped]


def wrap_docstring_line(indent: str, stripped: str) -> list[str] | None:
    """A docstring line re-flowed: its opening quotes stay on the first line, closing ones on the last."""
    opening = next((mark for mark in QUOTES if stripped.startswith(mark)), "")
    body = stripped[len(opening) :]
    closing = next((mark for mark in ('"""', "'''") if body.endswith(mark)), "")
    text = body[: len(body) - len(closing)] if closing else body
    # The closing quotes stay on the text's last line (the formatter joins a line of quotes alone back
    # onto a one-line docstring), so the last line leaves room for them.
    wrapped = _wrap(text, LIMIT - len(indent) - len(opening) - len(closing))
    if len(wrapped) > 1:  # the rest re-flowed at the full width once the opening quotes are placed
        wrapped = [wrapped[0], *_wrap(" ".join(wrapped[1:]), LIMIT - len(indent) - len(closing))]
    if not wrapped:
        return None
    lines = [indent + opening + wrapped[0]] + [indent + part for part in wrapped[1:]]
    lines[-1] += closing
    return None if any(len(line) > LIMIT for line in lines) else lines


def wrap_line(line: str, in_docstring: bool) -> list[str] | None:
    """The line re-flowed under the limit, or None if it is not prose this helper may re-flow."""
    stripped = line.lstrip()
    indent = line[: len(line) - len(stripped)]
    if stripped.startswith("#"):
        return wrap_comment(indent, stripped)
    if in_docstring:
        return wrap_docstring_line(indent, stripped)
    return None


def fix(path: Path) -> list[str]:
    """Re-flow the long prose lines of one file in place; returns the lines left too long."""
    source = path.read_text(encoding="utf-8")
    try:
        docs = docstring_lines(source)
    except SyntaxError:
        return [f"{path}: does not parse"]
    out: list[str] = []
    left: list[str] = []
    for number, line in enumerate(source.splitlines(), start=1):
        wrapped = None if len(line) <= LIMIT else wrap_line(line, number in docs)
        if len(line) > LIMIT and wrapped is None:
            left.append(f"{path}:{number}: {len(line)} characters")
        out.extend(wrapped or [line])
    path.write_text("\n".join(out) + ("\n" if source.endswith("\n") else ""), encoding="utf-8")
    return left


PREFIX = re.compile(r"^([rRbBfFuU]{0,2})(['\"])")


def _cut_points(body: str, is_f: bool) -> list[int]:
    """Where a literal's text may be cut: after a space, never inside an f-string's ``{...}`` field."""
    cuts: list[int] = []
    depth = 0
    i = 0
    while i < len(body):
        pair = body[i : i + 2]
        if is_f and depth == 0 and pair in ("{{", "}}"):
            i += 2
            continue
        if is_f and body[i] == "{":
            depth += 1
        elif is_f and body[i] == "}":
            depth = max(0, depth - 1)
        elif body[i] == " " and depth == 0 and (i == 0 or body[i - 1] != "\\"):
            cuts.append(i + 1)
        i += 1
    return cuts


def split_literal(token: str, room: int) -> str | None:
    """A one-line string literal as two adjacent literals, the first fitting ``room`` (None: no cut)."""
    match = PREFIX.match(token)
    if not match or token[len(match.group(1)) :].startswith(('"""', "'''")):
        return None
    prefix, quote = match.group(1), match.group(2)
    body = token[len(prefix) + 1 : -1]
    is_f = "f" in prefix.lower()
    fitting = [cut for cut in _cut_points(body, is_f) if cut + len(prefix) + 2 <= max(30, room)]
    if not fitting or not body[fitting[-1] :]:
        return None

    def literal(part: str) -> str:
        # A part with no replacement field is a plain literal (an f-string without one is a lint error).
        own = prefix if "{" in part or "}" in part else prefix.replace("f", "").replace("F", "")
        return f"{own}{quote}{part}{quote}"

    return f"{literal(body[: fitting[-1]])} {literal(body[fitting[-1] :])}"


def split_strings(path: Path) -> int:
    """Split the first long one-line string literal of each long line of ``path``; returns how many."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines(keepends=True)
    depth = 0
    done: set[int] = set()
    edits: list[tuple[int, int, int, str]] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        elif token.type == tokenize.STRING and token.start[0] == token.end[0]:
            row = token.start[0]
            if row in done or len(lines[row - 1].rstrip("\n")) <= LIMIT:
                continue
            split = split_literal(token.string, LIMIT - token.start[1])
            if split is not None:
                done.add(row)
                # Outside brackets the parts need parentheses to stay one expression.
                edits.append((row, token.start[1], token.end[1], split if depth else f"({split})"))
    for row, begin, end, split in edits:
        lines[row - 1] = lines[row - 1][:begin] + split + lines[row - 1][end:]
    if edits:
        path.write_text("".join(lines), encoding="utf-8")
    return len(edits)


def main(names: list[str]) -> int:
    """Fix the files named; list what is left for a hand."""
    for name in names:  # long string literals first, split between words into adjacent literals
        split_strings(Path(name))
    remaining = [line for name in names for line in fix(Path(name))]
    print("\n".join(remaining))
    print(f"{len(remaining)} lines left for a hand", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
