"""Report the modules and functions that have grown past the house's reading guide; never fail.

The guide (a module of about 300 lines, a function of about 60) is a prompt to look for a concept to
split out, not a limit: packing lines or cutting explanations to fit it makes code harder to read, so
this report only warns. `make check` prints it.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("config", "contracts", "tasks", "workers", "suture")
MODULE_GUIDE_LINES = 300
FUNCTION_GUIDE_LINES = 60


def source_files(root: Path = ROOT) -> list[Path]:
    """Every Python module of the package, each once (the ``suture/`` links are not followed)."""
    files: list[Path] = []
    for package in PACKAGES:
        base = root / package
        if base.is_symlink() or not base.is_dir():
            continue
        files += [path for path in sorted(base.rglob("*.py")) if not path.is_symlink()]
    return files


def long_functions(source: str) -> list[tuple[str, int]]:
    """The functions of a module longer than the guide, with their lengths in lines."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > FUNCTION_GUIDE_LINES:
                found.append((node.name, length))
    return found


def report(root: Path = ROOT) -> list[str]:
    """One line per module or function past the guide, longest modules first."""
    modules: list[tuple[int, str]] = []
    functions: list[str] = []
    for path in source_files(root):
        source = path.read_text(encoding="utf-8")
        name = path.relative_to(root).as_posix()
        lines = len(source.splitlines())
        if lines > MODULE_GUIDE_LINES:
            modules.append((lines, name))
        functions += [f"{name}: {func}() {length} lines" for func, length in long_functions(source)]
    return [f"{name}: {lines} lines" for lines, name in sorted(modules, reverse=True)] + functions


def main() -> int:
    """Print the report; the exit status is always 0 (a guide, not a gate)."""
    lines = report()
    if not lines:
        print(
            f"sizes: every module within ~{MODULE_GUIDE_LINES} lines, "
            f"every function within ~{FUNCTION_GUIDE_LINES}"
        )
        return 0
    print(
        f"sizes (a guide, not a gate): {len(lines)} past ~{MODULE_GUIDE_LINES} lines per module "
        f"or ~{FUNCTION_GUIDE_LINES} per function; look for a concept to split out where one exists:",
        file=sys.stderr,
    )
    for line in lines:
        print(f"  {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
