"""``python -m bench``: run every ``bench/bench_*.py`` module found, in name order."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import bench


def main() -> int:
    """Run each benchmark module's ``main()``; the exit code is the worst of theirs."""
    worst = 0
    names = sorted(m.name for m in pkgutil.iter_modules(bench.__path__) if m.name.startswith("bench_"))
    for name in names:
        print(f"== bench.{name}", flush=True)
        module = importlib.import_module(f"bench.{name}")
        worst = max(worst, int(module.main() or 0))
    return worst


if __name__ == "__main__":
    sys.exit(main())
