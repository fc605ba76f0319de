"""The launch command's defaults and its closing summary line."""

from __future__ import annotations

import pytest

from optiforge.algorithms.diverse.data import load_compas_regression, split_shards
from optiforge.algorithms.diverse.launch import DEFAULT_DATA, parse
from optiforge.algorithms.diverse.runner import simulate, summary_line
from optiforge.algorithms.diverse.settings import RunSettings


def row(iteration: int, distance: float) -> dict:
    return {
        "iteration": iteration,
        "distance": distance,
        "communication": 2 * iteration,
        "evaluations_per_node": 10.0 * iteration,
    }


def test_summary_line_says_relative_distance_rounds_calls_and_target() -> None:
    """The line gives the final distance relative to the start, the rounds, the oracle calls
    and the first recorded iteration at the target, or that it was not reached."""
    history = [row(0, 2.0), row(10, 2e-9), row(20, 2e-12)]
    line = summary_line(history, 1e-8)
    assert line.startswith("done: |zbar-z*|^2 = 1.00e-12 of the start after 20 iterations")
    assert "40 rounds, 200 oracle calls per node" in line
    assert line.endswith("target 1e-08 reached at iteration 10 (20 rounds)")
    assert summary_line(history[:2], 1e-10).endswith("target 1e-10 NOT reached")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--target", "2"], "--target: must be in (0, 1), got 2.0"),
        (["--nodes", "0"], "--nodes: must be an integer >= 1, got 0"),
        (["--step-size", "-1"], "--step-size: must be > 0, got -1.0"),
        (["--method", "adam"], "--method: unknown 'adam'; allowed:"),
        (["--data", "/no/such.csv"], "--data: no such file: /no/such.csv"),
    ],
)
def test_bad_arguments_stop_before_any_process_starts(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each mistake ends in argparse's one usage line naming the option."""
    with pytest.raises(SystemExit) as stop:
        parse(argv)
    assert stop.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("python -m optiforge.algorithms.diverse.launch: error: " + message)


def test_default_settings_converge_linearly_on_the_readme_command() -> None:
    """`launch --nodes 4 --topology ring --by-target` with every other flag at its default:
    each record (every 100 iterations) is closer to the saddle than the one before, and the
    run ends below 1e-10 of the starting squared distance (the old defaults stalled ~4e-3)."""
    args = parse(["--nodes", "4", "--topology", "ring", "--by-target"])
    settings = RunSettings(**{k: v for k, v in vars(args).items() if hasattr(RunSettings, k)})
    assert settings == RunSettings(nodes=4, topology="ring")
    features, targets = load_compas_regression(DEFAULT_DATA)
    shards = split_shards(features, targets, settings.nodes, settings.seed, args.by_target)
    history, _ = simulate(settings, *shards)
    distances = [r["distance"] for r in history]
    assert all(
        later < earlier for earlier, later in zip(distances[:-1], distances[1:], strict=True)
    )
    assert distances[-1] < 1e-10 * distances[0]
