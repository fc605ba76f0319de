"""The benchmark scripts with their own argparse check their options before any work
(fsnet_device_timing has its own checks, tested beside it)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

SCRIPTS = {
    "mtlkd_evaluation": ["--student", "s.pt", "--mtpomo", "m.pt", "--chunk", "0"],
    "mtlkd_kd_throughput": ["--student-batch", "0"],
}
EXPECTED = {
    "mtlkd_evaluation": "--chunk: must be > 0, got 0",
    "mtlkd_kd_throughput": "--student-batch: must be > 0, got 0",
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_bad_number_stops_in_one_usage_line(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each script ends in argparse's usage error naming the option, exit status 2."""
    module = importlib.import_module(f"optiforge.benchmarks.{name}")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in SCRIPTS[name]]
    monkeypatch.setattr("sys.argv", [name, *argv])
    with pytest.raises(SystemExit) as stop:
        module.main()
    assert stop.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "error: " in last and EXPECTED[name] in last
