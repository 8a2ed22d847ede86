"""The pinned versions deployments install agree with the ranges pyproject.toml gives library users."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parent.parent
CONSTRAINTS = REPO / "requirements" / "constraints.txt"


def _pins() -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"{line!r} in {CONSTRAINTS.name} is not an exact pin"
            pins[canonicalize_name(name)] = Version(version)
    return pins


def _declared() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    lines = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        lines += extra
    requirements = [Requirement(line) for line in lines]
    # suture[worker] and the like name this project's own extras, which are listed on their own.
    return [r for r in requirements if canonicalize_name(r.name) != "suture"]


def test_every_declared_dependency_is_pinned_within_its_range() -> None:
    # Given the ranges of every extra and the pins CI, make and the Dockerfile install with
    pins = _pins()
    # When each declared dependency is looked up (those for other platforms or extras never
    # installed together, e.g. the ocr extra, may be absent)
    unpinned, outside = [], []
    for requirement in _declared():
        name = canonicalize_name(requirement.name)
        if name not in pins:
            unpinned.append(requirement.name)
        elif not requirement.specifier.contains(pins[name], prereleases=True):
            outside.append(f"{requirement} but pinned {pins[name]}")
    # Then each is pinned to a version its range allows ("make constraints" renews the file)
    assert outside == []
    assert set(unpinned) <= {"ocrmypdf"}, f"not pinned: {unpinned}"


def test_the_installs_use_the_pins() -> None:
    # Given the three places that install suture's dependencies
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    # Then the venv, the bench venv and the image all install under the constraints
    assert makefile.count("pip install -q -c $(CONSTRAINTS)") == 2
    assert "-c requirements/constraints.txt" in dockerfile
    assert "COPY requirements ./requirements" in dockerfile
