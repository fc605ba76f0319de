"""One benchmark's smoke run as the tests run it: skipped where an optional peer or the user's
data is missing, written only into its own folder, each JSON starting with provenance."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from optiforge.benchmarks.harness import cli, registry
from optiforge.benchmarks.harness.record import git_state
from optiforge.benchmarks.harness.registry import Run

# Benchmarks whose own test runs the smoke preset through `run_smoke` and checks its values
# (test_smoke.py runs the others).
CHECKED_BY_OWN_TEST = {
    "covering": "test_covering_benchmark.py",
    "diverse": "test_diverse_benchmark.py",
    "hephaestus": "test_hephaestus_benchmark.py",
    "kv_compression": "test_kv_compression_benchmark.py",
    "kv_compression_needle": "test_kv_compression_needle.py",
    "mtlkd_gpu_recipe": "test_mtlkd_gpu_recipe.py",
    "scion_lr_sweep": "test_scion_lr_sweep.py",
    "submodular_streaming": "test_submodular_streaming_benchmark.py",
}


def run_smoke(name: str, out: Path) -> Run:
    """`python -m optiforge.benchmarks run NAME --preset smoke --out OUT`, checked."""
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
    run = cli.main(["run", name, "--preset", "smoke", "--out", str(out)])
    assert run is not None and run.written
    assert all(out in path.parents for path in run.written)
    for path in out.glob("*.json"):
        record = json.loads(path.read_text())["provenance"]
        assert record["preset"] == "smoke"
        assert record["command"].startswith(
            f"python -m optiforge.benchmarks run {name} --preset smoke"
        )
        assert record["git"]["commit"] == head  # the checkout's commit when the run started
    return run
