"""Per-instance evaluation: the baselines' ordering and ratios, computed once per instance."""

from __future__ import annotations

import numpy as np
import pytest

from optiforge.lightning_modules.hephaestus.evaluation import baselines, evaluate_instance
from optiforge.problems.qosd import SyntheticQoSDConfig, generate_instance


def test_metrics_order_the_baselines_and_reuse_them_per_instance() -> None:
    """Metrics order LP <= descent <= tuned <= greedy; baselines are cached per instance."""
    config = SyntheticQoSDConfig(num_nodes=30, edge_probability=0.15, edge_function="linear")
    instance = generate_instance(config, 3)
    calls: list[np.ndarray] = []

    def solve(greedy: np.ndarray) -> np.ndarray:
        calls.append(greedy)
        return greedy

    metrics = evaluate_instance(instance, solve)
    base = baselines(instance)
    assert calls[0] is base.greedy  # the phase is handed the cached greedy solution
    assert metrics["budget"] == pytest.approx(base.greedy.sum())
    assert metrics["budget_ratio_greedy"] == pytest.approx(1.0)
    # LP optimum <= descended tuned greedy <= tuned greedy <= greedy
    lp, descended = metrics["budget_lp"], metrics["budget_greedy_descent"]
    assert lp - 1e-6 <= descended <= metrics["budget_greedy_tuned"] + 1e-9
    assert metrics["budget_greedy_tuned"] <= metrics["budget_greedy"] + 1e-9
    assert metrics["greedy_descent_ratio_lp"] == pytest.approx(descended / lp)
    assert metrics["budget_ratio_lp"] == pytest.approx(metrics["budget_greedy"] / lp)
    for key in ("greedy_seconds", "greedy_descent_seconds"):  # reported, never compared
        assert np.isfinite(metrics[key]) and metrics[key] >= 0
    evaluate_instance(instance, solve)
    assert baselines(instance) is base and calls[1] is base.greedy


def test_nonlinear_instances_have_no_lp_metrics() -> None:
    """A log edge-function instance gets no LP metrics and is reported feasible."""
    config = SyntheticQoSDConfig(num_nodes=25, edge_probability=0.15, edge_function="log")
    metrics = evaluate_instance(generate_instance(config, 0), lambda greedy: greedy)
    assert "budget_lp" not in metrics and "greedy_descent_ratio_lp" not in metrics
    assert metrics["feasible"] == 1.0
