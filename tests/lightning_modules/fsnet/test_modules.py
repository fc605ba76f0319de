"""FSNet, its baselines and the constrained-problem data module, end to end on small families."""

from __future__ import annotations

from pathlib import Path

import lightning as L
import numpy as np
import pytest
import torch

from optiforge.benchmarks.quiet_trainer import quiet_trainer
from optiforge.datamodules.constrained_problems import ConstrainedProblemDataModule
from optiforge.lightning_modules.fsnet import DC3, FSNet, PenaltyNet, ProjectionNet
from optiforge.lightning_modules.fsnet.predictor import Predictor
from optiforge.problems.constrained import ProblemSpec

SMALL = ProblemSpec("convex_qp", num_vars=20, num_eq=8, num_ineq=8)


def small_data(problem: ProblemSpec, cache_dir: Path | None, **sizes: int):
    data = ConstrainedProblemDataModule(
        problem,
        **({"train_size": 256, "val_size": 16, "test_size": 32, "batch_size": 64} | sizes),
        eval_batch_size=32,
        cache_dir=None if cache_dir is None else str(cache_dir),
    )
    data.prepare_data()
    data.setup("fit")
    return data


def test_predictor_stays_in_the_box() -> None:
    """Huge inputs saturate the sigmoid at +-b, never beyond; without a box it is linear."""
    torch.manual_seed(0)
    boxed = Predictor(4, 6, (8,), box_bound=5.0)
    out = boxed(1e6 * torch.randn(32, 4, dtype=torch.float64))
    assert out.abs().max() <= 5.0 and out.abs().max() > 4.9
    free = Predictor(4, 6, (8,), box_bound=None)
    assert free(1e6 * torch.randn(32, 4, dtype=torch.float64)).abs().max() > 5.0


def test_data_module_splits_and_cache(tmp_path: Path) -> None:
    """Evaluation batches hold x, a checked y*, f(y*) and solve seconds; the cache is reused."""
    data = small_data(SMALL, tmp_path)
    x, y, objective, seconds = data.datasets["test"].tensors
    assert x.shape == (32, 8) and y.shape == (32, 20)
    family = data.family
    assert torch.allclose(family.objective(y, x), objective, atol=1e-12)
    violation = family.violation(y, x)
    assert violation.max_eq.max() < 1e-6 and violation.max_ineq.max() < 1e-6
    assert (seconds > 0).all()
    cache = data.cache_path("test")
    stamp = cache.stat().st_mtime_ns
    again = small_data(SMALL, tmp_path)
    assert cache.stat().st_mtime_ns == stamp
    assert torch.equal(again.datasets["test"].tensors[1], y)
    (train_x,) = data.datasets["train"].tensors
    assert train_x.shape == (256, 8) and not torch.equal(train_x[:32], x)


@pytest.mark.parametrize("field", ["train_size", "val_size", "batch_size", "num_starts"])
def test_data_module_rejects_bad_sizes(field: str) -> None:
    """A zero train_size, val_size, batch_size or num_starts raises naming the field."""
    with pytest.raises(ValueError, match=field):
        ConstrainedProblemDataModule(SMALL, **{field: 0})


def test_evaluation_of_the_reference_itself_is_exact() -> None:
    """A 'solver' returning the reference gets gap 0, feasible rate 1 and tiny violations."""
    data = small_data(SMALL, None)
    model = PenaltyNet(SMALL, (8,))
    x_all, y_all, _, _ = data.datasets["test"].tensors
    model.solve = lambda x: y_all[torch.cdist(x, x_all).argmin(dim=1)]
    (metrics,) = quiet_trainer(1).test(model, datamodule=data, verbose=False)
    assert metrics["test/objective_gap_max"] == pytest.approx(0.0, abs=1e-12)
    assert metrics["test/feasible_rate"] == 1.0
    assert metrics["test/ineq_violation_max"] < 1e-6
    assert metrics["test/speedup_share"] == 1.0
    assert 0 < metrics["test/speedup"] < float("inf")


def test_speedup_counts_only_feasible_instances_within_the_gap_bound() -> None:
    """Half the instances solved exactly, half far off: speedup_share is 1/2 and the speedup is
    over that half; a net matching none (untrained penalty net) reports NaN, not a speedup."""
    data = small_data(SMALL, None)
    model = PenaltyNet(SMALL, (8,))
    (untrained,) = quiet_trainer(1).test(model, datamodule=data, verbose=False)
    assert untrained["test/objective_gap_mean"] > 1e-2 or untrained["test/feasible_rate"] < 1
    assert untrained["test/speedup_share"] == 0.0
    assert np.isnan(untrained["test/speedup"])
    x_all, y_all, _, _ = data.datasets["test"].tensors
    exact = lambda x: y_all[torch.cdist(x, x_all).argmin(dim=1)]  # noqa: E731
    model.solve = lambda x: torch.cat([exact(x[:16]), 3.0 + exact(x[16:])])
    (half,) = quiet_trainer(1).test(model, datamodule=data, verbose=False)
    assert half["test/speedup_share"] == 0.5
    assert 0 < half["test/speedup"] < float("inf")
    with pytest.raises(ValueError, match="speedup_max_gap"):
        PenaltyNet(SMALL, (8,), speedup_max_gap=0.0)


def test_test_references_are_solved_only_for_the_limited_batches(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Under `limit_test_batches=1` (batches of 8 of 32 instances) the test split solves and
    evaluates 8 references, printing progress lines while it does."""
    data = ConstrainedProblemDataModule(
        SMALL, train_size=16, val_size=8, test_size=32, batch_size=8, eval_batch_size=8,
        cache_dir=None,
    )  # fmt: skip
    trainer = quiet_trainer(1)
    trainer.limit_test_batches = 1
    trainer.test(PenaltyNet(SMALL, (8,)), datamodule=data, verbose=False)
    assert len(data.datasets["test"]) == 8
    err = capfd.readouterr().err
    assert "test: solving references for 8 instances" in err
    assert "test: references 8/8 solved in" in err


def test_mismatched_problem_is_refused() -> None:
    """A model built for another problem than the datamodule's is refused at fit."""
    data = small_data(SMALL, None, train_size=64)
    model = PenaltyNet(ProblemSpec("convex_qp", num_vars=20, num_eq=8, num_ineq=8, seed=1), (8,))
    with pytest.raises(ValueError, match="model.problem"):
        quiet_trainer(1).fit(model, datamodule=data)


def test_trained_fsnet_meets_the_violation_bound_on_held_out_instances() -> None:
    """A briefly trained FSNet: every held-out output within 1e-5, and its objective gap below
    the untrained network's (training helps the objective, the solver the feasibility)."""
    data = small_data(SMALL, None)
    L.seed_everything(0, verbose=False)
    model = FSNet(SMALL, (64, 64), max_iter=10, unrolled_iter=5, test_max_iter=100)
    (before,) = quiet_trainer(1).test(model, datamodule=data, verbose=False)
    model.configure_optimizers = lambda: torch.optim.Adam(model.parameters(), lr=1e-3)
    fitted = quiet_trainer(15)
    fitted.fit(model, datamodule=data)
    (after,) = fitted.test(model, datamodule=data, verbose=False)
    assert after["test/eq_violation_max"] <= 1e-5
    assert after["test/ineq_violation_max"] <= 1e-5
    assert after["test/feasible_rate"] == 1.0
    assert after["test/objective_gap_mean"] < before["test/objective_gap_mean"]


def test_penalty_and_dc3_train_and_dc3_keeps_equalities_exact() -> None:
    """PenaltyNet and DC3 fit and test to finite gaps; DC3's equality violation < 1e-10."""
    data = small_data(SMALL, None)
    for cls in (PenaltyNet, DC3):
        L.seed_everything(0, verbose=False)
        model = cls(SMALL, (32,))
        model.configure_optimizers = lambda m=model: torch.optim.Adam(m.parameters(), lr=1e-3)
        fitted = quiet_trainer(3)
        fitted.fit(model, datamodule=data)
        (metrics,) = fitted.test(model, datamodule=data, verbose=False)
        assert np.isfinite(metrics["test/objective_gap_mean"])
        if cls is DC3:
            assert metrics["test/eq_violation_max"] < 1e-10


def test_projection_is_feasible_and_fixes_feasible_points() -> None:
    """Projected outputs are feasible; a feasible prediction is its own projection."""
    model = ProjectionNet(SMALL, (8,))
    family = model.family
    x = family.sample_parameters(4, 7)
    y = model.solve(x)
    violation = family.violation(y, x)
    assert violation.max_eq.max() < 1e-6 and violation.max_ineq.max() < 1e-6
    feasible = family.constructed_point(x)
    model.predictor.forward = lambda _: feasible
    assert torch.allclose(model.solve(x), feasible, atol=1e-6)


def test_projection_refuses_nonconvex_families() -> None:
    """ProjectionNet refuses a nonconvex problem family."""
    with pytest.raises(ValueError, match="not convex"):
        ProjectionNet(ProblemSpec("nonconvex_qp", 20, 8, 8), (8,))


@pytest.mark.parametrize(
    ("x", "message"),
    [
        (torch.zeros(2, 7, dtype=torch.float64), "num_eq"),
        (torch.full((2, 8), float("nan"), dtype=torch.float64), "NaN"),
        (torch.full((2, 8), 1.5, dtype=torch.float64), "feasible by construction"),
    ],
)
def test_bad_parameters_are_refused_with_a_clear_message(x: torch.Tensor, message: str) -> None:
    """Wrong width, NaN and parameters outside the box where feasibility is guaranteed."""
    model = FSNet(SMALL, (8,))
    with pytest.raises(ValueError, match=message):
        model.timed_solve(x)


def test_test_memory_changes_only_the_evaluation_seeker() -> None:
    """test_memory sets the evaluation L-BFGS memory (training keeps `memory`); the solve with 3
    pairs reaches the same violation bound from the same network, 0 pairs fail by name."""
    model = FSNet(SMALL, (16,), memory=30, test_memory=3, test_max_iter=200)
    assert (model.seeker.memory, model.test_seeker.memory) == (30, 3)
    assert FSNet(SMALL, (16,), memory=7).test_seeker.memory == 7
    x = model.family.sample_parameters(16, seed=3)
    y, _ = model.timed_solve(x)
    assert float(model.family.squared_violation(y, x).max()) <= 1e-12
    with pytest.raises(ValueError, match="test_memory"):
        FSNet(SMALL, (16,), test_memory=0)
