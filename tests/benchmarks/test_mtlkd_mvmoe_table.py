"""Reference sets of the MTL-KD table on MVMoE's benchmark, on tiny files in MVMoE's format."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

from optiforge.benchmarks.harness import cli, registry
from optiforge.benchmarks.mtlkd_mvmoe_table import suite_set

# depot at the origin, three customers on a 0.3 x 0.4 rectangle: the one-route optimum is the
# rectangle's perimeter 1.4 (capacity 10 holds the 9 units).
SQUARE = ([[0.0, 0.0]], [[0.3, 0.0], [0.3, 0.4], [0.0, 0.4]], [3.0, 4.0, 2.0], 10.0)


def write(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(value))


def args_for(tmp_path: Path) -> object:
    return cli.build_config(
        registry.get("mtlkd_mvmoe_table"),
        "paper",
        ["--mvmoe-data", str(tmp_path / "data"), "--cache-dir", str(tmp_path / "cache")]
        + ["--iterations", "50", "--instances", "4", "--generated-instances", "2"],
    )


def test_published_references_are_used_when_valid(tmp_path: Path) -> None:
    """Four instances, each with a valid published tour (cost 1.4): all four are kept, the
    reference is 1.4 and the source says published."""
    write(tmp_path / "data" / "CVRP" / "cvrp3_uniform.pkl", [SQUARE] * 4)
    write(
        tmp_path / "data" / "CVRP" / "hgs_cvrp3_uniform.pkl",
        [(np.float64(1.4), [1, 2, 3])] * 4,
    )
    batch, reference, source = suite_set("CVRP", 3, args_for(tmp_path))
    assert batch.batch_size == 4
    np.testing.assert_allclose(reference, 1.4)
    assert source.startswith("MVMoE file, published")


def test_invalid_published_references_are_replaced_by_pyvrp(tmp_path: Path) -> None:
    """Two of four published tours skip a customer (invalid, 50 % > 5 %): the first
    `--generated-instances` (2) are kept and PyVRP's tour (1.4) is the reference of each,
    also where the published one was invalid."""
    write(tmp_path / "data" / "CVRP" / "cvrp3_uniform.pkl", [SQUARE] * 4)
    published = [(np.float64(0.6), [1, 2]), (np.float64(1.4), [1, 2, 3])] * 2
    write(tmp_path / "data" / "CVRP" / "hgs_cvrp3_uniform.pkl", published)
    with pytest.warns(UserWarning, match="no valid reference"):
        batch, reference, source = suite_set("CVRP", 3, args_for(tmp_path))
    assert batch.batch_size == 2
    np.testing.assert_allclose(reference, 1.4, rtol=1e-6)
    assert "PyVRP 50 it." in source and "50% published invalid" in source
    assert len(list((tmp_path / "cache").glob("mvmoe_fill_rr_CVRP_n3_k2_i50.npy"))) == 1
