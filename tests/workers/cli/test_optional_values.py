"""Flags whose value is optional: a bare ``--batch-api`` before the inputs must not swallow them."""

from __future__ import annotations

import pytest

from suture.workers.cli import _bare_flags_valued, build_parser


@pytest.mark.parametrize(
    ("given", "mode", "inputs"),
    [
        (["batch", "--batch-api", "examples/", "--out", "o"], "all", ["examples/"]),
        (["batch", "examples/", "--out", "o", "--batch-api"], "all", ["examples/"]),
        (["batch", "--batch-api", "first", "examples/", "--out", "o"], "first", ["examples/"]),
        (["batch", "examples/", "--batch-api", "off", "--out", "o"], "off", ["examples/"]),
    ],
)
def test_a_bare_batch_api_flag_means_all_and_leaves_the_inputs(
    given: list[str], mode: str, inputs: list[str]
) -> None:
    # Given `suture batch` with --batch-api bare or valued, anywhere on the line
    # When the command line is parsed
    args = build_parser().parse_args(_bare_flags_valued(given))
    # Then the mode is the one asked (bare: all) and the inputs are the inputs
    assert args.batch_api == mode
    assert args.inputs == inputs


def test_words_after_a_double_dash_are_left_alone() -> None:
    # Given a flag's name after `--` (an input file named like a flag)
    given = ["batch", "--", "--batch-api"]
    # When the line is normalised, Then nothing is inserted after it
    assert _bare_flags_valued(given) == given
