"""The benchmark harness: provenance, the markdown writer, the timer, the run folder, the CLI."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from optiforge.benchmarks.harness import (
    Benchmark,
    Column,
    Run,
    cli,
    interleaved,
    markdown_table,
    registry,
    timeit,
)
from optiforge.benchmarks.harness.record import ROOT, provenance, scrub_paths


class FakeClock:
    """A clock that advances one second per reading and counts the calls it saw."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@dataclass(frozen=True)
class ToyConfig:
    size: int = 100
    names: tuple[str, ...] = ("a", "b")
    mode: str = "fast"
    seed: int = 0


def toy_run(run: Run, config: ToyConfig) -> None:
    run.write("toy", {"size": config.size, "names": list(config.names)}, "| x |\n|---|\n| 1 |")


TOY = Benchmark("toy", toy_run, ToyConfig, smoke={"size": 2})


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Benchmark:
    """The toy benchmark registered for the test only."""
    monkeypatch.setattr(registry, "NAMES", (*registry.NAMES, "toy"))
    real_get = registry.get
    monkeypatch.setattr(registry, "get", lambda name: TOY if name == "toy" else real_get(name))
    return TOY


def test_provenance_records_the_checked_out_commit_and_environment() -> None:
    """Command, commit (the checkout's HEAD), dirty flag, versions, threads, device and seed."""
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    record = provenance(
        "python -m optiforge.benchmarks run x", preset="smoke", seed=3, device="cpu"
    )
    assert record["git"]["commit"] == head
    assert isinstance(record["git"]["dirty"], bool)
    assert record["command"] == "python -m optiforge.benchmarks run x"
    assert record["seed"] == 3 and record["device"] == "cpu" and record["preset"] == "smoke"
    assert record["torch_threads"] >= 1
    assert {"python", "torch", "numpy", "lightning", "optiforge"} <= set(record["versions"])


def test_markdown_table_of_known_rows_is_exact() -> None:
    """Headers, rule, formats, a computed column, None and booleans."""
    rows = [{"set": "square", "r": 0.70710678, "ok": True}, {"set": "disk", "r": None, "ok": False}]
    columns = [
        Column("set", "set"),
        Column("r", "r", ".3f"),
        Column("2r", lambda row: None if row["r"] is None else 2 * row["r"], "+.1f"),
        Column("ok", "ok"),
    ]
    assert markdown_table(rows, columns) == (
        "| set | r | 2r | ok |\n|---|---|---|---|\n"
        "| square | 0.707 | +1.4 | yes |\n| disk | - | - | no |"
    )


def test_timeit_counts_warmup_and_repeats_with_a_fake_clock() -> None:
    """2 warm-up calls untimed, 3 repeats of 4 calls: 14 calls, each repeat one clock second."""
    calls = []
    syncs = []
    timing = timeit(
        lambda: calls.append(1),
        warmup=2,
        repeats=3,
        calls=4,
        clock=FakeClock(),
        sync=lambda: syncs.append(1),
    )
    assert len(calls) == 2 + 3 * 4
    assert timing.seconds == (0.25, 0.25, 0.25) and timing.median == 0.25
    assert len(syncs) == 2 * 3
    with pytest.raises(ValueError, match="repeats"):
        timeit(lambda: None, repeats=0)


def test_interleaved_alternates_methods_round_by_round() -> None:
    """A B A B: the order of calls after warm-up, one Timing per method."""
    order: list[str] = []
    timings = interleaved(
        {"A": lambda: order.append("A"), "B": lambda: order.append("B")},
        warmup=1,
        rounds=2,
        clock=FakeClock(),
    )
    assert order == ["A", "B", "A", "B", "A", "B"]
    assert timings["A"].seconds == (1.0, 1.0)


def test_default_run_folder_is_git_ignored_and_publish_is_explicit(toy: Benchmark) -> None:
    """Without --publish a run writes under runs/benchmarks (ignored by git), never results/."""
    invocation = cli.parse(["run", "toy"])
    assert not invocation.publish and invocation.out is None
    probe = registry.RUNS / "toy" / "20260101-000000" / "toy.json"
    ignored = subprocess.run(["git", "check-ignore", "-q", str(probe)], cwd=ROOT, check=False)
    assert ignored.returncode == 0
    assert cli.parse(["run", "toy", "--publish"]).publish
    with pytest.raises(SystemExit):
        cli.parse(["run", "toy", "--preset", "smoke", "--publish"])


def test_presets_and_options_build_the_config(toy: Benchmark) -> None:
    """Paper = the dataclass defaults, smoke overrides them, options override both."""
    assert cli.parse(["run", "toy"]).config == ToyConfig()
    assert cli.parse(["run", "toy", "--preset", "smoke"]).config.size == 2
    config = cli.parse(["run", "toy", "--preset", "smoke", "--size", "5", "--names", "x"]).config
    assert config == ToyConfig(size=5, names=("x",))
    with pytest.raises(SystemExit):
        cli.parse(["run", "toy", "--no-such-option", "1"])
    with pytest.raises(SystemExit):
        cli.parse(["run", "no_such_benchmark"])
    with pytest.raises(ValueError, match="registered: .*covering"):
        registry.get("no_such_benchmark")


def test_a_run_writes_provenance_json_and_markdown_into_its_folder(
    toy: Benchmark, tmp_path: Path
) -> None:
    """JSON starts with the provenance; markdown ends with a line naming command and commit."""
    run = cli.main(["run", "toy", "--preset", "smoke", "--out", str(tmp_path)])
    assert run is not None and not run.published
    payload = json.loads((tmp_path / "toy.json").read_text())
    assert list(payload) == ["provenance", "size", "names"] and payload["size"] == 2
    command = (
        "python -m optiforge.benchmarks run toy --preset smoke --out <local>/"  # no machine path
    )
    assert payload["provenance"]["command"].startswith(command)
    markdown = (tmp_path / "toy.md").read_text().splitlines()
    assert markdown[:3] == ["| x |", "|---|", "| 1 |"]
    assert markdown[-1].startswith("_`python -m optiforge.benchmarks run toy --preset smoke")


def test_machine_paths_are_scrubbed() -> None:
    """Paths inside a checkout become relative; other local paths lose their machine prefix."""
    assert scrub_paths(
        {"a": [f"{ROOT}/benchmarks/results", "/work/main/data/vrp", "--dir /tmp/runs/k50", 3]}
    ) == {"a": ["benchmarks/results", "data/vrp", "--dir <local>/runs/k50", 3]}


@pytest.mark.parametrize("preset", ["paper", "smoke"])
def test_help_after_a_name_lists_that_benchmarks_options_with_the_presets_defaults(
    preset: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`run covering --help` shows covering's own options, defaulting to the chosen preset
    (32 restarts in the paper preset, the smoke preset's fewer), and exits 0."""
    from optiforge.benchmarks.covering import Config

    with pytest.raises(SystemExit) as stop:
        cli.main(["run", "covering", "--preset", preset, "--help"])
    assert stop.value.code == 0
    text = capsys.readouterr().out
    restarts = registry.get("covering").preset(preset).get("restarts", Config.restarts)
    assert "python -m optiforge.benchmarks run covering" in text
    assert f"--restarts RESTARTS   default: {restarts}" in text
    assert "--publish" in text
