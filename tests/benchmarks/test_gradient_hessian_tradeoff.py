"""Trade-off benchmark pieces: the test functions' known values and the chain's gradient lower
bound, the fitted log-log slope, and the docs' summary sentences against the published JSON."""

from __future__ import annotations

import json
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optiforge.benchmarks.gradient_hessian_tradeoff import paper_floor_sentence, slope
from optiforge.benchmarks.harness.record import ROOT
from optiforge.benchmarks.harness.registry import RESULTS
from optiforge.benchmarks.nonconvex_functions import (
    carmon_chain,
    digits_mlp_loss,
    rosenbrock,
    rosenbrock_start,
)

F64 = torch.float64


def test_chain_value_at_zero() -> None:
    """f̄_T(0) = -Ψ(1)Φ(0) = -√(2πe)/2, since Ψ(0) = 0 and Ψ(1) = 1."""
    value = carmon_chain(torch.zeros(7, dtype=F64))
    assert value.item() == pytest.approx(-math.sqrt(2 * math.pi * math.e) / 2)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-3.0, 3.0), min_size=1, max_size=7),
    st.floats(-0.99, 0.99),
)
def test_chain_gradient_is_large_until_the_last_coordinate_is_reached(
    head: list[float], last: float
) -> None:
    """Carmon et al.: ‖∇f̄_T(x)‖ > 1 whenever |x_T| < 1."""
    x = torch.tensor([*head, last], dtype=F64, requires_grad=True)
    (gradient,) = torch.autograd.grad(carmon_chain(x), x)
    assert torch.linalg.vector_norm(gradient) > 1.0


def test_rosenbrock_values() -> None:
    """f(-1.2, 1) = 24.2; f = 0 and ∇f = 0 at (1, ..., 1)."""
    assert rosenbrock(rosenbrock_start(2)).item() == pytest.approx(24.2)
    ones = torch.ones(5, dtype=F64, requires_grad=True)
    (gradient,) = torch.autograd.grad(rosenbrock(ones), ones)
    assert rosenbrock(ones).item() == 0.0 and torch.all(gradient == 0)


def test_digits_mlp_loss() -> None:
    """d = 64·8 + 8 + 8·10 + 10 = 610; zero weights give uniform logits, loss log 10."""
    loss, x0 = digits_mlp_loss(hidden=8, samples=50, seed=0)
    assert x0.shape == (610,)
    assert loss(torch.zeros(610, dtype=F64)).item() == pytest.approx(math.log(10))
    assert torch.equal(x0, digits_mlp_loss(hidden=8, samples=50, seed=0)[1])


def test_slope_recovers_the_exponent() -> None:
    """Calls 1000·n_H^{-1/2} fit a slope of -1/2; non-converged runs are left out."""
    rows = [
        {"method": "Hessian-reuse AGD", "floor": 1.0, "n_H": n, "converged": True,
         "gradient_calls": 1000 * n**-0.5}
        for n in (1, 2, 4, 8)
    ]  # fmt: skip
    rows.append({**rows[0], "n_H": 16, "gradient_calls": 10**6, "converged": False})
    assert slope(rows, 1.0) == pytest.approx(-0.5)
    assert slope(rows, 32.0) is None


def test_floor_sentences_in_the_docs_match_the_published_results() -> None:
    """The docs' and the README's statements about the paper's floor 32 are the ones
    `paper_floor_sentence` computes from benchmarks/results/gradient_hessian_tradeoff.json."""
    results = json.loads((RESULTS / "gradient_hessian_tradeoff.json").read_text())["results"]
    docs = " ".join((ROOT / "docs" / "gradient_hessian_tradeoff.md").read_text().split())
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert paper_floor_sentence(results) in docs
    assert paper_floor_sentence(results, short=True) in readme


def test_floor_sentence_counts_wins_against_agd() -> None:
    """Hand-built rows: one floor-32 run beats AGD's 100 calls, one needs 3x, one fails."""
    rows = [
        {"method": "restarted AGD", "floor": None, "n_H": 0, "converged": True,
         "gradient_calls": 100},
        {"method": "Hessian-reuse AGD", "floor": 32.0, "n_H": 1, "converged": True,
         "gradient_calls": 300},
        {"method": "Hessian-reuse AGD", "floor": 32.0, "n_H": 2, "converged": True,
         "gradient_calls": 60},
        {"method": "Hessian-reuse AGD", "floor": 32.0, "n_H": 4, "converged": False,
         "gradient_calls": 50},
        {"method": "Hessian-reuse AGD", "floor": 1.0, "n_H": 1, "converged": True,
         "gradient_calls": 10},
    ]  # fmt: skip
    assert paper_floor_sentence({"toy": rows}) == (
        "With the paper's floor 32 the method reaches ε in 2 of 3 runs and needs fewer gradient "
        "queries than restarted AGD in 1 of them: toy at n_H = 2 (60 against 100); the other 1 "
        "that reach ε need 3.0-3x AGD's count."
    )
    assert paper_floor_sentence({"toy": rows[:2]}, short=True) == (
        "with the paper's floor 32, fewer gradient queries than restarted AGD in 0 of 1 runs"
    )
