"""MVMoE's test files: small files in MVMoE's format, read back with validated references."""

from __future__ import annotations

import math
import os
import pickle
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.problems.vrp.mvmoe_files import load_mvmoe_set, solver_summary
from optiforge.problems.vrp.validator import validate_batch

# Depot (0, 0), customers 1 (0.3, 0), 2 (0.3, 0.4), 3 (0, 0.4): d01 = 0.3, d12 = 0.4,
# d23 = 0.3, d03 = 0.4, d02 = d13 = 0.5. Instance k is this square scaled by SCALES[k] (times
# too), so its costs are SCALES[k] times instance 0's.
SCALES = (1.0, 0.5, 1.25)
SQUARE = ((0.3, 0.0), (0.3, 0.4), (0.0, 0.4))
# customer windows and service (unscaled): route 1 -> 3 -> 2 arrives at 0.3, 1.0 and 1.5.
WINDOWS = ((0.3, 0.6), (1.0, 1.6), (0.9, 1.2))
SERVICE = 0.2
# (solver stem, route, cost of instance 0) per variant; a 2nd file with a worse solution.
# VRPBLTW: customer 2 is a backhaul (demand -1) visited last in its route, after linehaul:
# feasible under every backhaul rule (strict, mixed or signed load).
SOLUTIONS = {
    "CVRP": {"hgs": ([1, 2, 3], 1.4), "or_tools_20s": ([1, 0, 2, 0, 3], 2.4)},
    "VRPBLTW": {"hgs": ([1, 3, 2], 1.6), "or_tools_20s": ([1, 0, 3, 2], 1.8)},
    "OVRPTW": {"hgs": ([1, 3, 2], 1.1), "or_tools_20s": ([2, 0, 1, 0, 3], 1.2)},
}
DEMANDS = {"CVRP": (3.0, 4.0, 2.0), "VRPBLTW": (3.0, -1.0, 2.0), "OVRPTW": (3.0, 4.0, 2.0)}


def instance_tuple(name: str, scale: float, shift: float) -> tuple:
    """One instance of variant `name` in MVMoE's tuple layout (envs/<VARIANT>Env.py)."""
    xy = [[shift + scale * x, shift + scale * y] for x, y in SQUARE]
    fields: list = [[[shift, shift]], xy, list(DEMANDS[name]), 10.0]
    if "L" in name.removeprefix("CVRP"):
        fields.append(3.0)
    if "TW" in name:
        fields.append([scale * SERVICE] * 3)
        fields.append([scale * early for early, _ in WINDOWS])
        fields.append([scale * late for _, late in WINDOWS])
    return tuple(fields)


def write(path: Path, value: object) -> Path:
    """Pickle `value` as MVMoE's scripts do."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(value))
    return path


def write_set(root: Path, name: str, results: dict[str, list] | None = None) -> Path:
    """Test file of the 3 instances of `name` (size 3) and its result files under `root`."""
    folder = root / name
    write(folder / f"{name.lower()}3_uniform.pkl", [
        instance_tuple(name, scale, 0.1 * k) for k, scale in enumerate(SCALES)
    ])  # fmt: skip
    if results is None:
        results = {
            solver: [(np.float64(cost * scale), route) for scale in SCALES]
            for solver, (route, cost) in SOLUTIONS[name].items()
        }
    for solver, entries in results.items():
        write(folder / f"{solver}_{name.lower()}3_uniform.pkl", entries)
    return folder


@pytest.mark.parametrize("name", list(SOLUTIONS))
def test_round_trip_costs_and_fields(tmp_path: Path, name: str) -> None:
    """3 instances and 2 solver files per variant: the reference is the best hand-computed
    cost, a named solver gives its own, the fields follow MVMoE's conventions, and the
    validator accepts the best routes on the returned instances at the same costs."""
    write_set(tmp_path, name)
    best = load_mvmoe_set(tmp_path, name, 3)
    route, cost = SOLUTIONS[name]["hgs"]
    expected = [cost * scale for scale in SCALES]
    assert best.name == f"MVMoE/{name}/n3"
    assert best.reference_cost.dtype == torch.float64
    assert best.reference_cost.tolist() == pytest.approx(expected, abs=1e-12)
    assert best.scale.tolist() == [1.0, 1.0, 1.0]
    worse = load_mvmoe_set(tmp_path, name, 3, reference="or_tools_20s")
    worse_cost = SOLUTIONS[name]["or_tools_20s"][1]
    assert worse.reference_cost.tolist() == pytest.approx(
        [worse_cost * s for s in SCALES], abs=1e-12
    )
    batch = best.instances
    assert batch.locs.dtype == torch.float32 and batch.batch_size == 3
    assert batch.locs[2, 2].tolist() == pytest.approx([0.2 + 0.375, 0.2 + 0.5])
    assert batch.signed_load.tolist() == [True] * 3
    assert batch.mixed_backhaul.tolist() == [True] * 3
    assert batch.open_route.tolist() == [name.startswith("O")] * 3
    assert batch.capacity.tolist() == [10.0] * 3
    costs = validate_batch(batch, [route] * 3)
    assert costs.tolist() == pytest.approx(expected, abs=1e-6)


def test_vrpbltw_fields(tmp_path: Path) -> None:
    """VRPBLTW: negative demand -> backhaul, route limit read, depot window [0, 3] with
    service 0, customer windows and service scaled as written."""
    write_set(tmp_path, "VRPBLTW")
    batch = load_mvmoe_set(tmp_path, "VRPBLTW", 3).instances
    assert batch.linehaul_demand[0].tolist() == [0.0, 3.0, 0.0, 2.0]
    assert batch.backhaul_demand[0].tolist() == [0.0, 0.0, 1.0, 0.0]
    assert batch.distance_limit.tolist() == [3.0] * 3
    assert batch.time_windows[1, 0].tolist() == [0.0, 3.0]
    windows = [[0.15, 0.3], [0.5, 0.8], [0.45, 0.6]]
    np.testing.assert_allclose(batch.time_windows[1, 1:].numpy(), windows, rtol=1e-6)
    assert batch.service_time[1].tolist() == pytest.approx([0.0, 0.1, 0.1, 0.1])


def test_neutral_values_without_attributes(tmp_path: Path) -> None:
    """CVRP: no backhaul, windows [0, inf), service 0, limit inf, closed routes."""
    write_set(tmp_path, "CVRP")
    batch = load_mvmoe_set(tmp_path, "CVRP", 3).instances
    assert batch.backhaul_demand.abs().sum() == 0
    assert batch.time_windows[..., 0].abs().sum() == 0
    assert torch.isinf(batch.time_windows[..., 1]).all()
    assert batch.service_time.abs().sum() == 0 and torch.isinf(batch.distance_limit).all()


def test_count_takes_the_first_instances(tmp_path: Path) -> None:
    """count=2 reads instances 0 and 1 and their references; more than the file holds raises."""
    write_set(tmp_path, "CVRP")
    first = load_mvmoe_set(tmp_path, "CVRP", 3, count=2)
    assert first.reference_cost.tolist() == pytest.approx([1.4, 0.7], abs=1e-12)
    with pytest.raises(ValueError, match=r"^count: 4 exceeds the 3 instances in .*cvrp3_uniform"):
        load_mvmoe_set(tmp_path, "CVRP", 3, count=4)
    with pytest.raises(ValueError, match=r"^count: must be None \(all\) or an integer >= 1, got 0"):
        load_mvmoe_set(tmp_path, "CVRP", 3, count=0)


def test_infeasible_solutions_are_excluded_with_a_warning(tmp_path: Path) -> None:
    """A missing customer and an overfull route are rejected by the validator: the file's
    warning counts them per reason, their references come from the other file or are NaN."""
    bad = [
        (np.float64(1.4), [1, 2, 3]),
        (np.float64(0.1), [1, 2]),  # customer 3 never visited
        (np.float64(0.1), [1, 2, 3]),  # instance 2 gets demands 3 + 4 + 4 > capacity 10
    ]
    write_set(tmp_path, "CVRP", {"hgs": bad})
    path = tmp_path / "CVRP" / "cvrp3_uniform.pkl"
    instances = pickle.loads(path.read_bytes())
    instances[2] = (*instances[2][:2], [3.0, 4.0, 4.0], 10.0)  # 11 > 10 on one route
    write(path, instances)
    with pytest.warns(UserWarning) as record:
        result = load_mvmoe_set(tmp_path, "CVRP", 3)
    messages = [str(w.message) for w in record]
    assert any(
        "hgs_cvrp3_uniform.pkl: 2 of 3 solutions excluded: 2 rejected by the validator" in m
        and "visits 1" in m
        for m in messages
    )
    assert any("2 of 3 instances have no valid reference" in m for m in messages)
    assert result.reference_cost[0].item() == pytest.approx(1.4, abs=1e-12)
    assert torch.isnan(result.reference_cost[1:]).all()


def test_best_reference_skips_an_infeasible_cheaper_solution(tmp_path: Path) -> None:
    """An infeasible solution with a low reported cost never becomes the reference."""
    cheat = [(np.float64(0.01), [1, 2]) for _ in SCALES]  # customer 3 skipped
    fair = [(np.float64(2.4 * s), [1, 0, 2, 0, 3]) for s in SCALES]
    write_set(tmp_path, "CVRP", {"lkh": cheat, "or_tools_20s": fair})
    with pytest.warns(UserWarning, match="lkh_cvrp3_uniform.pkl: 3 of 3 solutions excluded"):
        result = load_mvmoe_set(tmp_path, "CVRP", 3)
    assert result.reference_cost.tolist() == pytest.approx([2.4 * s for s in SCALES], abs=1e-12)


def test_summary_compares_reported_and_validated_costs(tmp_path: Path) -> None:
    """The summary reports the file's cost field and the validator's: a file that adds 0.25
    to instance 1's cost shows a max difference of 0.25; a None cost counts as unsolved;
    (cost, route, duration) entries are read too."""
    entries = [
        (np.float64(1.4), [1, 2, 3], 1.5),
        (np.float64(0.7 + 0.25), [1, 2, 3], 2.0),
        (None, [], 20.0),
    ]
    write_set(tmp_path, "CVRP", {"or_tools_20s": entries})
    with pytest.warns(UserWarning, match="1 of 3 solutions excluded: 0 rejected .* 1 without"):
        (summary,) = solver_summary(tmp_path, "CVRP", 3)
    assert summary.solver == "or_tools_20s"
    assert summary.valid == 2 and summary.infeasible == 0 and summary.unsolved == 1
    assert summary.max_cost_difference == pytest.approx(0.25, abs=1e-12)
    assert summary.reported_mean == pytest.approx((1.4 + 0.95) / 2)
    assert summary.validated_mean == pytest.approx((1.4 + 0.7) / 2)


def test_flat_folder_and_no_result_files(tmp_path: Path) -> None:
    """mvmoe_dir may be the folder holding the file; with no result file every reference is
    NaN and a warning says so."""
    folder = write_set(tmp_path, "OVRPTW", results={})
    with pytest.warns(UserWarning, match="3 of 3 instances have no valid reference .* none"):
        result = load_mvmoe_set(folder, "OVRPTW", 3)
    assert torch.isnan(result.reference_cost).all()


def test_bad_paths_and_names_give_one_line(tmp_path: Path) -> None:
    """A missing folder, a missing test file (the existing ones listed), an unknown variant
    and an unknown reference (the available ones listed) each raise one ValueError line."""
    with pytest.raises(ValueError, match=r"^mvmoe_dir: no folder .*nowhere$"):
        load_mvmoe_set(tmp_path / "nowhere", "CVRP", 3)
    write_set(tmp_path, "CVRP")
    with pytest.raises(
        ValueError, match=r"no .*cvrp50_uniform.pkl.*: \['CVRP/cvrp3_uniform.pkl'\]$"
    ):
        load_mvmoe_set(tmp_path, "CVRP", 50)
    with pytest.raises(ValueError, match=r"variant must be one of .*got 'CVRPX'"):
        load_mvmoe_set(tmp_path, "CVRPX", 3)
    with pytest.raises(
        ValueError,
        match=r"^reference: 'lkh' has no result file .* \['best', 'hgs', 'or_tools_20s'\]$",
    ):
        load_mvmoe_set(tmp_path, "CVRP", 3, reference="lkh")
    with pytest.raises(ValueError, match=r"^size: must be an integer >= 1"):
        load_mvmoe_set(tmp_path, "CVRP", True)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t[:3], r"instance 1 must be a tuple of 4 fields"),
        (lambda t: (t[0], t[1][:2], *t[2:]), r"instance 1: node_xy must be .* shape \(3, 2\)"),
        (lambda t: (t[0], np.zeros((3, 3)), *t[2:]), r"node_xy must be .*got \[\[0\. 0\. 0\.\] \["),
        (lambda t: (*t[:2], [1.0, math.nan, 2.0], t[3]), r"instance 1: node_demand must be finite"),
        (lambda t: (*t[:3], "ten"), r"instance 1: capacity must be finite numbers of shape \(\)"),
        (lambda t: (*t[:2], [3.0, 40.0, 2.0], t[3]), r"instance 1: linehaul_demand: demand 40"),
    ],
)
def test_malformed_instance_names_file_instance_and_field(tmp_path: Path, edit, message) -> None:
    """A malformed instance tuple ends in one ValueError naming the file, instance and field."""
    folder = write_set(tmp_path, "CVRP")
    path = folder / "cvrp3_uniform.pkl"
    instances = pickle.loads(path.read_bytes())
    instances[1] = edit(instances[1])
    write(path, instances)
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: .*{message}") as error:
        load_mvmoe_set(tmp_path, "CVRP", 3)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ({"a": 1}, r"must be a list of \(cost, route\) for each of the 3 instances read, got dict"),
        ([(1.4, [1, 2, 3])], r"for each of the 3 instances read, got 1 entries$"),
        ([(1.4, [1, 2, 3])] * 2 + [(1.4,)], r"entry 2 must be \(cost, route\)"),
        ([(1.4, [1, 2, 3])] * 2 + [("x", [1])], r"entry 2: cost must be a finite number"),
        ([(1.4, [1, 2, 3])] * 2 + [(1.4, [1.0, 2.0])], r"entry 2: route must be a list of node"),
    ],
)
def test_malformed_result_file_names_entry(tmp_path: Path, entries, message) -> None:
    """A malformed result file ends in one ValueError naming the file and the entry."""
    write_set(tmp_path, "CVRP", {"hgs": entries})
    with pytest.raises(ValueError, match=rf"hgs_cvrp3_uniform.pkl: .*{message}"):
        load_mvmoe_set(tmp_path, "CVRP", 3)


class _Shell:
    """Unpickling it would run `touch <marker>`."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return os.system, (f"touch {self.marker}",)


def test_malicious_result_file_is_refused(tmp_path: Path) -> None:
    """A result file that would run a shell command is refused by name; nothing runs."""
    marker = tmp_path / "ran"
    write_set(tmp_path, "CVRP", {"hgs": [(np.float64(1.0), _Shell(marker))] * 3})
    with pytest.raises(ValueError, match=r"hgs_cvrp3_uniform.pkl: refused to unpickle global"):
        load_mvmoe_set(tmp_path, "CVRP", 3)
    assert not marker.exists()


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(["CVRP", "OVRP", "VRPB", "OVRPL"]),
    points=st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=2, max_size=8),
    data=st.data(),
)
def test_out_and_back_reference(tmp_path_factory, name: str, points, data) -> None:
    """Random instances, one route per customer, or per linehaul and backhaul pair: demands
    split by sign, the reference is the routes' Euclidean length (without the return leg if
    open), the reported cost is not used."""
    size = len(points) - 1
    # customer k is a backhaul if k % 3 == 1 (B variants); it rides with linehaul k - 1, whose
    # larger demand keeps the route feasible under every backhaul load rule
    backhauls = {k for k in range(size) if "B" in name and k % 3 == 1}
    demands = [
        -data.draw(st.integers(1, 4)) if k in backhauls else data.draw(st.integers(5, 9))
        for k in range(size)
    ]
    row: list = [[list(points[0])], [list(p) for p in points[1:]], demands, 9.0]
    if "L" in name:
        row.append(3.0)
    root = tmp_path_factory.mktemp("mvmoe")
    folder = root / name
    write(folder / f"{name.lower()}{size}_uniform.pkl", [tuple(row)])
    routes = [[k + 1, k + 2] if k + 1 in backhauls else [k + 1] for k in range(size)]
    routes = [route for route in routes if route[0] - 1 not in backhauls]
    sequence = [node for route in routes for node in (*route, 0)]
    write(folder / f"hgs_{name.lower()}{size}_uniform.pkl", [(np.float64(-1.0), sequence)])
    result = load_mvmoe_set(root, name, size)
    expected = 0.0
    for route in routes:
        stops = [points[0]] + [points[node] for node in route]
        stops += [] if name.startswith("O") else [points[0]]
        expected += sum(math.dist(a, b) for a, b in zip(stops[:-1], stops[1:], strict=True))
    assert result.reference_cost.item() == pytest.approx(expected, abs=1e-9)
    batch = result.instances
    signed = (batch.linehaul_demand - batch.backhaul_demand)[0, 1:]
    assert signed.tolist() == demands
