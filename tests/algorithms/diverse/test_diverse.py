"""DIVERSE and the baselines in one-process simulation: tracking, special cases, convergence."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import Tensor

from optiforge.algorithms.diverse.centralized_optimistic import CentralizedOptimistic
from optiforge.algorithms.diverse.communicator import DenseCommunicator
from optiforge.algorithms.diverse.diverse import Diverse
from optiforge.algorithms.diverse.gt_extragradient import GradientTrackingExtragradient
from optiforge.algorithms.diverse.problem import RobustRegression
from optiforge.algorithms.diverse.runner import simulate
from optiforge.algorithms.diverse.sampling import BatchSampler
from optiforge.algorithms.diverse.settings import RunSettings
from optiforge.algorithms.diverse.topology import make_topology

PROBLEM = RobustRegression(0.2, 0.2)


def test_gradient_tracking_preserves_the_average(shards: tuple[Tensor, Tensor]) -> None:
    """After every step, mean_i s_i = mean_i delta_i (DIVERSE) and mean_i g_i(z_i) (GT-EG)."""
    features, targets = shards
    topology = make_topology("ring", 4)
    diverse = Diverse(
        PROBLEM, features, targets, DenseCommunicator(topology), 0.1, batch_size=4.0, mix_rounds=2
    )
    gt_eg = GradientTrackingExtragradient(
        PROBLEM, features, targets, DenseCommunicator(topology), 0.1
    )
    for _ in range(40):
        diverse.step()
        gt_eg.step()
        torch.testing.assert_close(
            diverse.tracker.mean(0), diverse.estimate.mean(0), rtol=0, atol=1e-12
        )
        torch.testing.assert_close(
            gt_eg.tracker.mean(0), gt_eg.operator.mean(0), rtol=0, atol=1e-12
        )
        assert diverse.tracker.std(0).abs().sum() > 0  # the nodes really disagree


def test_full_batch_single_node_is_optimistic_gradient(shards: tuple[Tensor, Tensor]) -> None:
    """One node, b = n, p = beta = 0: DIVERSE is z+ = z - eta ((1 + a) g(z) - a g(z-)),
    the same trajectory as the all-reduce OGDA baseline and as that recursion written out."""
    features, targets = shards[0][:1], shards[1][:1]
    single = make_topology("ring", 1)
    diverse = Diverse(
        PROBLEM, features, targets, DenseCommunicator(single), 0.3, alpha=0.9, beta=0.0,
        snapshot_probability=0.0, batch_size=30.0, batch_distribution="fixed",
    )  # fmt: skip
    ogda = CentralizedOptimistic(PROBLEM, features, targets, DenseCommunicator(single), 0.3, 0.9)
    z = previous = torch.zeros(1, 6, dtype=torch.float64)
    for _ in range(25):
        step = 1.9 * PROBLEM.local_operator(z, features, targets) - 0.9 * PROBLEM.local_operator(
            previous, features, targets
        )
        z, previous = z - 0.3 * step, z
        diverse.step()
        ogda.step()
        torch.testing.assert_close(diverse.z, z, rtol=0, atol=1e-12)
        torch.testing.assert_close(ogda.z, z, rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", ["diverse", "gt_eg", "centralized_ogda"])
def test_linear_convergence_on_heterogeneous_shards(
    method: str, shards: tuple[Tensor, Tensor]
) -> None:
    """Each method converges geometrically to the exact saddle: 1e-3 of the initial squared
    distance by a third of the run, 1e-9 at its end, with the nodes in consensus."""
    batch = {"diverse": dict(batch_size=3.0, mix_rounds=2)}.get(method, {})
    run_settings = RunSettings(
        method=method, nodes=4, topology="ring", step_size=0.2, lambda_x=0.2, lambda_y=0.2,
        iterations=1500, log_every=500, **batch,
    )  # fmt: skip
    history, _ = simulate(run_settings, *shards)
    start = history[0]["distance"]
    assert history[1]["distance"] < 1e-3 * start
    assert history[-1]["distance"] < 1e-9 * start
    assert history[-1]["gap"] < 1e-8 and history[-1]["consensus"] < 1e-9 * start


def test_diverse_uses_fewer_oracle_calls_than_gt_eg(shards: tuple[Tensor, Tensor]) -> None:
    """To 1e-6 of the initial distance, small random batches need fewer g_ij calls per node."""

    def calls(method: str, **extra: float) -> float:
        run = RunSettings(
            method=method, nodes=4, step_size=0.2, lambda_x=0.2, lambda_y=0.2, iterations=1200,
            log_every=5, **extra,
        )  # fmt: skip
        history, _ = simulate(run, *shards)
        return next(r for r in history if r["distance"] < 1e-6 * history[0]["distance"])[
            "evaluations_per_node"
        ]

    assert calls("diverse", batch_size=3.0) < 0.5 * calls("gt_eg")


@settings(max_examples=15, deadline=None)
@given(
    distribution=st.sampled_from(["binomial", "fixed", "uniform"]),
    batch=st.integers(1, 10),
    seed=st.integers(0, 10_000),
)
def test_batches_are_unbiased_random_subsets(distribution: str, batch: int, seed: int) -> None:
    """Indices are distinct and in range; the weighted batch mean estimates the shard mean."""
    sampler = BatchSampler(distribution, float(batch), 20)
    generator = torch.Generator().manual_seed(seed)
    values = torch.arange(20, dtype=torch.float64) ** 2
    draws = 4000
    total = 0.0
    for _ in range(draws):
        index = sampler.draw(generator)
        assert len(set(index.tolist())) == len(index) and (index < 20).all()
        if distribution == "fixed":
            assert len(index) == batch
        if distribution == "uniform":
            assert 1 <= len(index) <= 2 * batch - 1
        total += float(values[index].sum()) / batch
    assert total / draws == pytest.approx(float(values.mean()), rel=0.08)
