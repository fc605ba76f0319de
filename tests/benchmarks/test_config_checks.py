"""Every benchmark checks its options before any work: one line naming the option."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest

from optiforge.benchmarks.harness import cli, registry
from optiforge.benchmarks.harness.checks import config_errors


def _benchmark(name: str) -> registry.Benchmark:
    try:
        return registry.get(name)
    except ImportError as error:  # a peer imported at module level
        pytest.skip(f"optional peer not installed: {error}")


@pytest.mark.parametrize("name", registry.NAMES)
@pytest.mark.parametrize("preset", ["smoke", "paper"])
def test_presets_pass_the_checks(name: str, preset: str) -> None:
    """The shipped presets are valid configs (the checks refuse nothing a preset uses, but
    the missing data a user brings, where it is not here)."""
    benchmark = _benchmark(name)
    config = dataclasses.replace(
        cli.build_config(benchmark, preset, []),
        **{field: Path(".") for field in benchmark.external},
    )
    assert config_errors(config, benchmark.nonnegative) == []


def _positive_field(benchmark: registry.Benchmark) -> str | None:
    """A numeric option that must be > 0, if the benchmark has one."""
    hints = typing.get_type_hints(benchmark.config)
    for item in dataclasses.fields(benchmark.config):
        if item.name in ("seed", "seeds", *benchmark.nonnegative):
            continue
        hint = str(hints[item.name])
        if hint in ("<class 'int'>", "<class 'float'>"):
            return item.name
    return None


@pytest.mark.parametrize("name", registry.NAMES)
def test_a_nonpositive_number_stops_with_one_line_naming_the_option(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--<field> 0` ends in argparse's usage error naming the option; nothing runs."""
    benchmark = _benchmark(name)
    field_name = _positive_field(benchmark)
    if field_name is None:
        pytest.skip(f"{name} has no scalar numeric option")
    option = "--" + field_name.replace("_", "-")
    with pytest.raises(SystemExit) as stop:
        cli.parse(["run", name, option, "0"])
    assert stop.value.code == 2
    message = capsys.readouterr().err.strip().splitlines()[-1]
    assert message.startswith(f"python -m optiforge.benchmarks run {name}: error:")
    # the harness's check, or the benchmark's own one naming the field first
    assert f"{option}: must be > 0, got 0" in message or field_name in message


@dataclasses.dataclass(frozen=True)
class _Toy:
    seed: int = 0
    steps: int = 3
    rates: tuple[float, ...] = (0.1,)
    noise: float = 0.0
    data: Path = Path(".")
    files: tuple[Path, ...] = ()


def test_checks_name_each_bad_field() -> None:
    """Hand-built configs: every refused value is named once, allowed zeros pass."""
    assert config_errors(_Toy(), nonnegative=("noise",)) == []
    errors = config_errors(
        _Toy(
            seed=-1,
            steps=0,
            rates=(),
            noise=float("nan"),
            data=Path("/no/such"),
            files=(Path("."), Path("/no/file")),
        ),
        nonnegative=("noise",),
    )
    assert errors == [
        "--seed: must be >= 0, got -1",
        "--steps: must be > 0, got 0",
        "--rates: give at least one value",
        "--noise: must be finite, got nan",
        "--data: no such file or folder: /no/such",
        "--files: no such file or folder: /no/file",
    ]
    assert config_errors(_Toy(rates=(0.1, -0.5)), ("noise",)) == ["--rates: must be > 0, got -0.5"]
    assert config_errors(_Toy(noise=0.0)) == ["--noise: must be > 0, got 0.0"]


def test_kv_compression_needs_two_cost_blocks(capsys: pytest.CaptureFixture[str]) -> None:
    """The cost sweep fits a slope: one block size stops before any work."""
    with pytest.raises(SystemExit):
        cli.parse(["run", "kv_compression", "--cost-blocks", "64"])
    assert "--cost-blocks: give at least two sizes" in capsys.readouterr().err


def test_mtlkd_kd_throughput_names_a_commit_that_is_not_there(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A baseline commit the clone lacks stops before any worker starts; HEAD passes."""
    assert cli.parse(["run", "mtlkd_kd_throughput", "--baseline", "HEAD"]).config.baseline == "HEAD"
    with pytest.raises(SystemExit):
        cli.parse(["run", "mtlkd_kd_throughput", "--baseline", "no-such-commit"])
    assert "--baseline: no commit 'no-such-commit' in this clone" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("mtlkd_ddp_scaling", "--short-steps", "5", "--long-steps", "3"),
            "--long-steps: must be > --short-steps (5), got 3",
        ),
        (("mtlkd_gpu_recipe", "--variants", "CVRP", "XVRP"), "--variants: unknown ['XVRP']"),
    ],
)  # fmt: skip
def test_the_mtlkd_benchmarks_refuse_inconsistent_options_in_one_line(
    args: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A long run not longer than the short one, an unknown variant: usage error, one line."""
    with pytest.raises(SystemExit) as stop:
        cli.parse(["run", *args])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err.strip().splitlines()[-1]
