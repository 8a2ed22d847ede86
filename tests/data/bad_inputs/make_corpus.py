"""Regenerate the bad-input corpus: model outputs, documents, configs and policies, with manifests.

Run ``.venv/bin/python tests/data/bad_inputs/make_corpus.py`` from the repository root after
changing a case; the files it writes are committed, so tests never depend on this script's run.
The cases live in corpus_syntax.py and corpus_schema.py (model outputs, built from corpus_common.py)
and corpus_files.py (documents, configs and policies); this script writes them out.
Each folder has a ``manifest.yaml`` saying what every case must produce (read by
tests/reliability/test_bad_inputs.py). Deterministic (fixed seeds, no clock) but for documents/encrypted.pdf,
whose file ID and keys pypdf draws at random on each run: leave the committed one unless its case changes.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import yaml

# Sibling modules: running this file puts its own folder first on sys.path.
from corpus_common import SOURCE, Case, base_quiz, dumps
from corpus_files import config_cases, document_cases
from corpus_schema import schema_cases
from corpus_syntax import syntax_cases

HERE = Path(__file__).resolve().parent


def output_cases() -> list[Case]:
    """(name, raw bytes, expected kind or 'ok', expected code or None, finish_reason)."""
    rng = random.Random(7)
    good = dumps(base_quiz())
    return [*syntax_cases(rng, good), *schema_cases(good)]


def write_outputs() -> int:
    folder = HERE / "outputs"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "source.txt").write_text(SOURCE, encoding="utf-8")
    manifest: dict[str, Any] = {}
    for name, raw, kind, code, finish in output_cases():
        if name in manifest:
            raise SystemExit(f"duplicate case {name}")
        (folder / f"{name}.out").write_bytes(raw)
        entry: dict[str, Any] = {"kind": kind}
        if code:
            entry["code"] = code
        if finish:
            entry["finish_reason"] = finish
        manifest[name] = entry
    header = ("# model outputs: <name>.out -> the failure kind (and code) Contract.validate must report; ok " "= " "valid\n")
    (folder / "manifest.yaml").write_text(header + yaml.safe_dump(manifest, sort_keys=True), encoding="utf-8")
    return len(manifest)


def write_documents() -> int:
    folder = HERE / "documents"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    manifest = {}
    for name, (data, expected) in document_cases().items():
        (folder / name).write_bytes(data)
        manifest[name] = expected
    header = "# documents: file -> the skip reason the document loader must give, or ok (read)\n"
    (folder / "manifest.yaml").write_text(header + yaml.safe_dump(manifest, sort_keys=True), encoding="utf-8")
    return len(manifest)


def write_configs() -> int:
    folder = HERE / "configs"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    manifest = {}
    for name, (text, kind, expected) in config_cases().items():
        (folder / name).write_bytes(text.encode("utf-8"))
        manifest[name] = {"loader": kind, "error_contains": expected}
    header = ("# configs and policies: file -> which loader (settings/policy/eval) and what its one-line " "error " "says\n")
    (folder / "manifest.yaml").write_text(header + yaml.safe_dump(manifest, sort_keys=True), encoding="utf-8")
    return len(manifest)


if __name__ == "__main__":
    counts = (write_outputs(), write_documents(), write_configs())
    print(f"outputs {counts[0]}, documents {counts[1]}, configs {counts[2]}, total {sum(counts)}")
