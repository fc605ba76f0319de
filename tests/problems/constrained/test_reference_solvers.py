"""Tests for the reference solvers and the cached datasets of the constrained families."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy.optimize import OptimizeResult, lsq_linear

import optiforge.problems.constrained.dataset as dataset_module
from optiforge.problems.constrained import (
    FAMILIES,
    ConstrainedFamily,
    build_dataset,
    check_points,
    default_solver,
    load_dataset,
    make_family,
    solve_reference,
)
from optiforge.problems.constrained.reference_solvers import (
    SLSQP_LINE_SEARCH_STALL,
    _confirmed_on_stall,
)

SMALL = {"num_vars": 10, "num_eq": 5, "num_ineq": 5}
NAMES = sorted(FAMILIES)
CONVEX = [name for name in NAMES if make_family(name, **SMALL).is_convex]
TOLERANCE = 1e-6


def small_family(name: str, seed: int = 3) -> ConstrainedFamily:
    return make_family(name, **SMALL, seed=seed)


def test_default_solvers() -> None:
    """Clarabel exactly for the convex families, SLSQP for the others."""
    assert CONVEX == ["convex_qcqp", "convex_qp", "convex_socp", "dc3_convex_qp"]
    for name in NAMES:
        expected = "clarabel" if name in CONVEX else "slsqp"
        assert default_solver(small_family(name)) == expected


@pytest.mark.parametrize("name", NAMES)
def test_reference_is_feasible_and_no_worse_than_the_constructed_point(name: str) -> None:
    """Every instance accepted: violations < 1e-6, objective <= f(A^+ x), timed."""
    family = small_family(name)
    x = family.sample_parameters(4, seed=1)
    reference = solve_reference(family, x)
    assert reference.accepted.all() and reference.flagged.size == 0
    assert reference.max_eq_violation.max() < TOLERANCE
    assert reference.max_ineq_violation.max() < TOLERANCE
    y = torch.from_numpy(reference.solutions)
    recomputed = family.violation(y, x)
    assert recomputed.max_eq.max() < TOLERANCE and recomputed.max_ineq.max() < TOLERANCE
    np.testing.assert_allclose(reference.objectives, family.objective(y, x).numpy())
    constructed = family.objective(family.constructed_point(x), x).numpy()
    assert (reference.objectives <= constructed + 1e-9).all()
    assert (reference.objectives < constructed - 1e-3).any()  # it did optimize
    assert np.isfinite(reference.solve_times).all() and (reference.solve_times > 0).all()


@pytest.mark.parametrize("name", ["convex_qp", "dc3_convex_qp"])
def test_convex_qp_solution_satisfies_kkt(name: str) -> None:
    """Stationarity with nonnegative multipliers on the active rows, found by bounded least
    squares from the torch gradients alone (no solver duals)."""
    family = small_family(name)
    x = family.sample_parameters(3, seed=2)
    reference = solve_reference(family, x)
    assert reference.accepted.all()
    for instance in range(3):
        y = torch.from_numpy(reference.solutions[instance : instance + 1]).requires_grad_(True)
        parameters = x[instance : instance + 1]
        (gradient,) = torch.autograd.grad(family.objective(y, parameters).sum(), y)
        rows = family.ineq_residual(y, parameters)[0]
        active = torch.nonzero(rows > -1e-7).flatten()
        jacobian = torch.autograd.functional.jacobian(
            lambda point, p=parameters: family.ineq_residual(point, p)[0], y.detach()
        )[:, 0, :]
        normals = torch.cat([family.A, jacobian[active]]).T.numpy()
        lower = np.r_[np.full(family.num_eq, -np.inf), np.zeros(active.numel())]
        fit = lsq_linear(normals, -gradient[0].numpy(), bounds=(lower, np.inf), tol=1e-12)
        assert np.abs(normals @ fit.x + gradient[0].numpy()).max() < 1e-6


@pytest.mark.parametrize("name", CONVEX)
def test_convex_reference_agrees_with_slsqp_on_the_torch_functions(name: str) -> None:
    """cvxpy (its own formulation) and SLSQP (the torch functions) reach the same optimum."""
    family = small_family(name)
    x = family.sample_parameters(3, seed=3)
    clarabel = solve_reference(family, x)
    slsqp = solve_reference(family, x, solver="slsqp")
    assert clarabel.accepted.all() and slsqp.accepted.all()
    np.testing.assert_allclose(slsqp.objectives, clarabel.objectives, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(slsqp.solutions, clarabel.solutions, atol=1e-3)


@pytest.mark.parametrize("name", ["convex_qp", "dc3_convex_qp"])
def test_osqp_fallback_agrees_with_clarabel(name: str) -> None:
    """The OSQP fallback accepts every instance and matches Clarabel's objectives."""
    family = small_family(name)
    x = family.sample_parameters(3, seed=4)
    osqp = solve_reference(family, x, solver="osqp")
    assert osqp.solver == "osqp" and osqp.accepted.all()
    np.testing.assert_allclose(osqp.objectives, solve_reference(family, x).objectives, rtol=1e-6)


def test_more_starts_never_give_a_worse_local_optimum() -> None:
    """The first start is A^+ x in both runs, so the best of three is at most the single one."""
    family = small_family("nonconvex_socp")
    x = family.sample_parameters(3, seed=6)
    single = solve_reference(family, x)
    several = solve_reference(family, x, num_starts=3, seed=1)
    assert several.accepted.all()
    assert (several.objectives <= single.objectives + 1e-9).all()


def test_line_search_stall_is_confirmed_from_its_point_and_other_failures_are_not() -> None:
    """A tight SLSQP solve that stalls in its line search (mode 8) is re-solved from the stalled
    point at the default tolerance; success or any other failure mode is returned unchanged."""
    calls: list[tuple[str, np.ndarray]] = []

    def fake(name: str, status: int, success: bool):
        def minimize(_: torch.Tensor, start: np.ndarray) -> OptimizeResult:
            calls.append((name, start))
            return OptimizeResult(x=start + 1.0, status=status, success=success)

        return minimize

    confirm = fake("confirm", 0, True)
    stalled = _confirmed_on_stall(fake("tight", SLSQP_LINE_SEARCH_STALL, False), confirm)
    result = stalled(torch.zeros(1, 2), np.zeros(3))
    assert [name for name, _ in calls] == ["tight", "confirm"]
    np.testing.assert_array_equal(calls[1][1], np.ones(3))
    assert result.success and np.array_equal(result.x, np.full(3, 2.0))
    for status, success in [(0, True), (9, False)]:
        calls.clear()
        result = _confirmed_on_stall(fake("tight", status, success), confirm)(None, np.zeros(3))
        assert [name for name, _ in calls] == ["tight"] and result.success == success


@pytest.mark.parametrize(("name", "solver"), [("convex_qp", "clarabel"), ("nonconvex_qp", "slsqp")])
def test_infeasible_instances_are_flagged_not_accepted(name: str, solver: str) -> None:
    """x far outside [-1, 1] needs |y_j| > 5 somewhere: the box makes it infeasible."""
    family = small_family(name)
    x = family.sample_parameters(3, seed=0)
    x[1] *= 100.0
    reference = solve_reference(family, x, solver=solver)
    assert reference.solver == solver
    assert reference.accepted.tolist() == [True, False, True]
    assert reference.flagged.tolist() == [1]
    assert not reference.feasible[1] or not reference.solver_success[1]


def test_check_points_flags_perturbed_and_missing_points() -> None:
    """check_points flags a perturbed point and a NaN point as infeasible."""
    family = small_family("convex_qcqp")
    x = family.sample_parameters(3, seed=0)
    points = family.constructed_point(x).numpy()
    points[1, 0] += 1e-4
    points[2] = np.nan
    check = check_points(family, x, points)
    assert check.feasible(TOLERANCE).tolist() == [True, False, False]
    assert check.max_eq_violation[1] > 1e-5
    assert np.isnan(check.objectives[2]) and np.isinf(check.max_ineq_violation[2])


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("convex_qp", {"solver": "gurobi"}, "solver must be one of"),
        ("nonconvex_qp", {"solver": "clarabel"}, "needs a convex family; 'nonconvex_qp'"),
        ("dc3_nonconvex_qp", {"solver": "osqp"}, "needs a convex family"),
        ("convex_socp", {"solver": "osqp"}, "solves QPs only; 'convex_socp'"),
        ("convex_qp", {"tolerance": 0.0}, "tolerance must be positive, got 0.0"),
        ("nonconvex_qp", {"num_starts": 0}, "num_starts must be a positive integer, got 0"),
    ],
)
def test_bad_solver_options_raise(name: str, options: dict[str, object], message: str) -> None:
    """Unknown solver, wrong family kind, bad tolerance or num_starts raise clearly."""
    family = small_family(name)
    with pytest.raises(ValueError, match=message):
        solve_reference(family, family.sample_parameters(1, seed=0), **options)


def test_bad_parameters_raise_before_solving() -> None:
    """solve_reference rejects mis-shaped or NaN parameters before solving."""
    family = small_family("convex_qp")
    with pytest.raises(ValueError, match=r"x must have shape \[B, num_eq\] = \[B, 5\]"):
        solve_reference(family, torch.zeros(2, 6, dtype=torch.float64))
    with pytest.raises(ValueError, match="x must be finite: it contains NaN"):
        solve_reference(family, torch.full((2, 5), float("nan"), dtype=torch.float64))


def build_small(path: Path | None, **overrides: object) -> dataset_module.ConstrainedDataset:
    arguments = {"num_instances": 3, "family_seed": 5, "parameter_seed": 6, **overrides}
    return build_dataset("nonsmooth_qcqp", **SMALL, cache_path=path, **arguments)


def test_cache_round_trip_reloads_without_solving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A matching cache reloads the same dataset without calling the solver."""
    path = tmp_path / "cache" / "nonsmooth_qcqp.npz"
    built = build_small(path)
    assert path.exists() and built.reference.accepted.all()

    def no_solving(*_: object, **__: object) -> None:
        raise AssertionError("a matching cache must be loaded, not re-solved")

    monkeypatch.setattr(dataset_module, "solve_reference", no_solving)
    loaded = build_small(path)
    assert loaded.metadata == built.metadata and loaded.metadata["solver"] == "slsqp"
    assert torch.equal(loaded.parameters, built.parameters)
    assert loaded.family.arrays().keys() == built.family.arrays().keys()
    for key, array in built.family.arrays().items():
        assert np.array_equal(loaded.family.arrays()[key], array)
    for field in ("solutions", "objectives", "solve_times", "accepted", "max_eq_violation"):
        assert np.array_equal(getattr(loaded.reference, field), getattr(built.reference, field))
    assert np.array_equal(load_dataset(path).reference.solutions, built.reference.solutions)


def test_cache_with_other_metadata_is_refused(tmp_path: Path) -> None:
    """A cache built with other metadata is refused, naming each differing field."""
    path = tmp_path / "data.npz"
    build_small(path)
    with pytest.raises(ValueError, match="num_instances: cached 3, requested 4") as error:
        build_small(path, num_instances=4, parameter_seed=7)
    assert "parameter_seed: cached 6, requested 7" in str(error.value)
    assert "delete it or choose another cache_path" in str(error.value)


def test_write_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash mid-write leaves neither a target file nor a temporary file behind."""
    path = tmp_path / "data.npz"
    real_savez = np.savez

    def crash_after_writing(handle: object, **arrays: np.ndarray) -> None:
        real_savez(handle, **arrays)
        raise OSError("disk full")

    monkeypatch.setattr(dataset_module.np, "savez", crash_after_writing)
    with pytest.raises(OSError, match="disk full"):
        build_small(path)
    assert list(tmp_path.iterdir()) == []


def test_loading_rechecks_the_stored_solutions(tmp_path: Path) -> None:
    """A solution edited in the file is flagged on load; garbage and wrong names are refused."""
    path = tmp_path / "data.npz"
    build_small(path)
    with np.load(path) as archive:
        stored = {key: archive[key] for key in archive.files}
    stored["solutions"][0] += 0.1
    np.savez(path, **stored)
    assert load_dataset(path).reference.accepted.tolist() == [False, True, True]
    assert json.loads(str(stored["metadata"]))["family"] == "nonsmooth_qcqp"
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip file")
    with pytest.raises(ValueError, match="is not a readable .npz dataset cache"):
        load_dataset(garbage)
    with pytest.raises(ValueError, match="cache_path must end in .npz, got"):
        build_small(tmp_path / "data.pkl")
