"""Every registered benchmark runs its smoke preset in seconds, with provenance, in its folder."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from optiforge.benchmarks.harness import cli, registry
from optiforge.benchmarks.harness.record import git_state


@pytest.mark.parametrize("name", registry.NAMES)
def test_smoke_preset_runs_and_records_provenance(name: str, tmp_path: Path) -> None:
    """The smoke run writes only into its own folder, and each JSON starts with provenance."""
    try:
        benchmark = registry.get(name)
    except ImportError as error:  # a peer imported at module level
        pytest.skip(f"optional peer not installed: {error}")
    for peer in benchmark.peers:
        try:
            importlib.import_module(peer.replace("-", "_"))
        except ImportError as error:
            pytest.skip(f"optional peer {peer} not installed: {error}")
    config = cli.build_config(benchmark, "smoke", [])
    for field in benchmark.external:
        value = getattr(config, field)  # a path, or a tuple of paths
        paths = value if isinstance(value, tuple) else (value,)
        if not all(Path(path).exists() for path in paths):
            pytest.skip(f"needs data the user brings: --{field.replace('_', '-')}")
    head = git_state()["commit"]
    run = cli.main(["run", name, "--preset", "smoke", "--out", str(tmp_path)])
    assert run is not None and run.written
    assert all(tmp_path in path.parents for path in run.written)
    for path in tmp_path.glob("*.json"):
        record = json.loads(path.read_text())["provenance"]
        assert record["preset"] == "smoke"
        assert record["command"].startswith(
            f"python -m optiforge.benchmarks run {name} --preset smoke"
        )
        assert record["git"]["commit"] == head  # the checkout's commit when the run started
