"""The testers' command line: one decision line on data files, one error line naming the field."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from optiforge.algorithms.replicable_testing import (
    closeness_samples,
    closeness_test,
    independence_samples,
    independence_test,
    uniformity_samples,
    uniformity_test,
)
from optiforge.algorithms.replicable_testing.cli import main


def write(path: Path, rows: np.ndarray) -> Path:
    """One sample (a label, or a pair "a,b") per line."""
    lines = [",".join(map(str, row)) if np.ndim(row) else str(row) for row in rows]
    path.write_text("\n".join(lines) + "\n\n")
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of the command line."""
    try:
        main(argv)
        status = 0
    except SystemExit as exit_:
        status = int(exit_.code or 0)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_decisions_match_the_api(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each subcommand prints the API's decision on the file's samples, and the bound."""
    rng = np.random.default_rng(0)
    x = rng.integers(0, 20, closeness_samples(20, 0.5, 0.3) + 5)
    y = rng.integers(0, 20, x.size + 40)
    pairs = rng.integers(0, 4, (independence_samples(4, 5, 0.5, 0.3), 2))
    setting = ["--eps", "0.5", "--rho", "0.3", "--seed", "9"]
    status, out, _ = run(
        ["uniformity", "--samples", str(write(tmp_path / "x", x)), "--n", "20", *setting], capsys
    )
    assert status == 0 and out == f"{uniformity_test(x, 20, 0.5, 0.3, 9)}\n"
    args = ["closeness", "--samples", str(tmp_path / "x"), "--other", str(write(tmp_path / "y", y))]
    status, out, _ = run([*args, "--n", "20", *setting, "--threshold", "0.5"], capsys)
    assert out == f"{closeness_test(x, y, 20, 0.5, 0.3, 9, threshold=0.5)}\n"
    args = [
        "independence",
        "--samples",
        str(write(tmp_path / "p", pairs)),
        "--n1",
        "4",
        "--n2",
        "5",
    ]
    status, out, _ = run([*args, *setting], capsys)
    assert out == f"{independence_test(pairs, 4, 5, 0.5, 0.3, 9)}\n"
    status, out, _ = run(
        ["bound", "independence", "--n1", "4", "--n2", "5", "--eps", "0.5", "--rho", "0.3"], capsys
    )
    assert out == f"{independence_samples(4, 5, 0.5, 0.3)}\n"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"--eps": "0"}, "eps"),
        ({"--eps": "1.5"}, "eps"),
        ({"--rho": "1"}, "rho"),
        ({"--rho": "0"}, "rho"),
        ({"--n": "3"}, "samples"),
        ({"--samples": "missing.txt"}, "samples"),
        ({"--eps": "abc"}, "--eps"),
        ({"--seed": "-2"}, "seed"),
    ],
)
def test_bad_input_is_one_line_naming_the_field(
    change: dict[str, str], field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """eps outside (0, 1], rho outside (0, 1), bad labels, files or seeds: exit 2, one line."""
    x = np.arange(uniformity_samples(10, 0.5, 0.3)) % 10
    options = {"--samples": str(write(tmp_path / "x", x)), "--n": "10", "--eps": "0.5"}
    options |= {"--rho": "0.3", "--seed": "1"} | change
    argv = ["uniformity", *[item for pair in options.items() for item in pair]]
    status, out, err = run(argv, capsys)
    assert status == 2 and out == ""
    assert err.count("\n") == 1
    assert err.startswith((f"error: {field}: ", f"error: argument {field}: "))


def test_a_malformed_line_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A line that is not a label names the file's field and the line number."""
    path = tmp_path / "x"
    path.write_text("1\n2\nthree\n")
    status, _, err = run(
        [
            "uniformity",
            "--samples",
            str(path),
            "--n",
            "5",
            "--eps",
            "0.5",
            "--rho",
            "0.3",
            "--seed",
            "0",
        ],
        capsys,
    )
    assert status == 2
    assert err == f"error: samples: line 3 of {path}: 'three' is not an integer label\n"
