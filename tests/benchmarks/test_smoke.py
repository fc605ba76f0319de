"""Every registered benchmark runs its smoke preset in seconds, with provenance, in its folder:
here, or in the benchmark's own test where that one checks the smoke run's values."""

from __future__ import annotations

from pathlib import Path

import pytest

from optiforge.benchmarks.harness import registry
from tests.benchmarks.smoke_run import CHECKED_BY_OWN_TEST, run_smoke

HERE = Path(__file__).parent


@pytest.mark.parametrize("name", [n for n in registry.NAMES if n not in CHECKED_BY_OWN_TEST])
def test_smoke_preset_runs_and_records_provenance(name: str, tmp_path: Path) -> None:
    """The smoke run writes only into its own folder, and each JSON starts with provenance."""
    run_smoke(name, tmp_path)


def test_the_other_smoke_runs_are_in_their_benchmarks_own_tests() -> None:
    """Each benchmark left out above is registered and its own test runs `run_smoke` on it."""
    assert set(CHECKED_BY_OWN_TEST) <= set(registry.NAMES)
    for name, test_file in CHECKED_BY_OWN_TEST.items():
        assert f'run_smoke("{name}", ' in (HERE / test_file).read_text(), test_file
