"""The testbeds benchmark trains exactly the README's commands, and its smoke caps are the
trainer limits they say."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from optiforge.benchmarks.harness.record import ROOT
from optiforge.benchmarks.testbeds import TESTBEDS, Config, limits
from optiforge.cli_args import prepare


def configs(arguments: list[str]) -> list[Path]:
    """The config files of a prepared `train.py` argument list, resolved from the root."""
    return [
        (ROOT / arguments[i + 1]).resolve()
        for i, argument in enumerate(arguments)
        if argument == "--config"
    ]


@pytest.mark.parametrize("name", sorted(TESTBEDS))
def test_each_testbed_runs_its_readme_command(name: str) -> None:
    """The command is the one in the README row of docs/<name>.md, and its configs (as the CLI
    prepares them: none given is configs/default.yaml) are the ones the benchmark trains."""
    spec = TESTBEDS[name]
    row = next(
        line
        for line in (ROOT / "README.md").read_text().splitlines()
        if f"(docs/{name}.md)" in line
    )
    assert f"`{spec['command']}`" in row
    arguments = prepare(shlex.split(spec["command"])[2:])
    assert arguments[0] == "fit"
    assert configs(arguments) == configs(["--config", str(spec["config"]), *spec["overlays"]])


def test_limits_cap_batches_and_epochs_only_when_asked() -> None:
    """The paper preset (no caps) adds no override; the smoke caps limit every split."""
    assert limits(Config()) == []
    assert limits(Config(batches=2, epochs=1)) == [
        "--trainer.limit_train_batches",
        "2",
        "--trainer.limit_val_batches",
        "2",
        "--trainer.limit_test_batches",
        "2",
        "--trainer.max_epochs",
        "1",
    ]
