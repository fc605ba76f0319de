"""The methods the Neural-ES benchmark compares, all behind the same `EvaluationBudget`.

Each `run_*` spends at most `budget.max_evaluations` evaluations of the problem, only through
`budget.evaluate` (so every method's evaluated points land in the same non-dominated archive),
and returns a dict of extra results. NSGA-II, MOEA/D and SMS-EMOA are pymoo's with their
default operators (SBX + polynomial mutation); the PSL-PGPE baseline trains a small Pareto set
network (preference -> sigmoid box) by EvoTorch's PGPE on the mean Tchebycheff value over a
shared preference batch; random search draws uniformly from the box.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import Tensor

from optiforge.lightning_modules.neural_es.es_step import (
    default_preferences,
    default_samples,
    neural_es_step,
)
from optiforge.lightning_modules.neural_es.model import ParetoSetModel
from optiforge.problems.multiobjective.budget import EvaluationBudget
from optiforge.problems.multiobjective.reference_directions import lattice_near, uniform_simplex
from optiforge.problems.multiobjective.scalarization import running_ideal, tchebycheff

UNEVALUATED = 1e30  # objective value pymoo sees for offspring past the budget (never counted)


def run_neural_es(
    budget: EvaluationBudget,
    seed: int,
    hidden: int = 256,
    lr: float = 1e-3,
    num_blocks: int = 16,
    known_ideal: bool = False,
) -> dict[str, Any]:
    """Neural-ES with the authors' population sizes, Adam (amsgrad); stops when the next step
    would exceed the budget. The ideal point is the running minimum, or with `known_ideal` the
    problem's exact one (as the authors' code does on its suite). Returns the trained model."""
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    model = ParetoSetModel(budget.dim, budget.num_obj, num_blocks, (hidden, hidden))
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, amsgrad=True)
    prefs_per_step, samples = default_preferences(budget.dim), default_samples(budget.dim)
    ideal = torch.full((budget.num_obj,), math.inf, dtype=torch.float64)
    if known_ideal:
        ideal = budget.known_ideal()
    while budget.remaining >= prefs_per_step * samples:
        prefs = uniform_simplex(prefs_per_step, budget.num_obj, generator).float()
        step = neural_es_step(model, budget, prefs, samples, ideal, generator)
        ideal = step.ideal
        optimizer.zero_grad()
        step.loss.backward()
        optimizer.step()
    return {"model": model.eval(), "ideal": ideal}


def run_random_search(budget: EvaluationBudget, seed: int, batch: int = 1000) -> dict[str, Any]:
    """Uniform samples from the box, in batches, until the budget is spent exactly."""
    generator = torch.Generator().manual_seed(seed)
    lower, upper = budget.bounds(torch.zeros(1, dtype=torch.float64))
    while budget.remaining > 0:
        n = min(batch, budget.remaining)
        u = torch.rand(n, budget.dim, generator=generator, dtype=torch.float64)
        budget.evaluate(lower + (upper - lower) * u)
    return {}


def run_pymoo(budget: EvaluationBudget, seed: int, algorithm: str) -> dict[str, Any]:
    """pymoo's `algorithm` (nsga2, moead or smsemoa) until the budget is spent; offspring past
    the budget get UNEVALUATED objectives and the run terminates at that generation's end."""
    from pymoo.algorithms.moo.moead import MOEAD
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.algorithms.moo.sms import SMSEMOA
    from pymoo.core.problem import Problem
    from pymoo.optimize import minimize

    lower, upper = budget.bounds(torch.zeros(1, dtype=torch.float64))

    class BudgetProblem(Problem):
        def __init__(self) -> None:
            super().__init__(
                n_var=budget.dim, n_obj=budget.num_obj, xl=lower.numpy(), xu=upper.numpy()
            )

        def _evaluate(self, x: np.ndarray, out: dict[str, Any], *args: Any, **kwargs: Any) -> None:
            n = min(len(x), budget.remaining)
            f = np.full((len(x), budget.num_obj), UNEVALUATED)
            if n:
                f[:n] = budget.evaluate(torch.from_numpy(np.asarray(x[:n], float))).numpy()
            out["F"] = f

    dirs = lattice_near(budget.num_obj, 100).numpy()
    pop_size = len(dirs)
    if algorithm == "nsga2":
        method = NSGA2(pop_size=pop_size)
    elif algorithm == "moead":
        method = MOEAD(ref_dirs=dirs, n_neighbors=20, prob_neighbor_mating=0.9)
    elif algorithm == "smsemoa":
        method = SMSEMOA(pop_size=pop_size)
    else:
        raise ValueError(
            f"algorithm must be one of ['nsga2', 'moead', 'smsemoa'], got {algorithm!r}"
        )
    while budget.remaining > 0:  # pymoo may stop on its own tolerance: restart until spent
        minimize(BudgetProblem(), method, ("n_eval", budget.remaining), seed=seed, verbose=False)
        seed += 1
    return {}


def psl_network(
    weights: Tensor, prefs: Tensor, hidden: int, lower: Tensor, upper: Tensor
) -> Tensor:
    """A batch of one-hidden-layer Pareto set networks: flat `weights [P, L]` applied to
    `prefs [K, M]` give solutions `[P, K, D]` inside the box (sigmoid output)."""
    pop, num_obj, dim = len(weights), prefs.shape[1], len(lower)
    sizes = (num_obj * hidden, hidden, hidden * dim, dim)
    w1, b1, w2, b2 = torch.split(weights, sizes, dim=1)
    h = torch.relu(prefs @ w1.view(pop, num_obj, hidden) + b1.unsqueeze(1))
    out = torch.sigmoid(h @ w2.view(pop, hidden, dim) + b2.unsqueeze(1))
    return lower + (upper - lower) * out


def run_psl_pgpe(
    budget: EvaluationBudget,
    seed: int,
    hidden: int = 32,
    popsize: int = 20,
    prefs_per_step: int = 10,
    center_lr: float = 0.01,
    stdev_init: float = 0.1,
) -> dict[str, Any]:
    """A Pareto set network trained by EvoTorch's PGPE (Adam on the centre, symmetric
    sampling, centred ranks): fitness of a weight vector = mean Tchebycheff value of its
    solutions over `prefs_per_step` preferences shared by the population (`popsize *
    prefs_per_step` evaluations per generation)."""
    from evotorch import Problem
    from evotorch.algorithms import PGPE

    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    lower, upper = budget.bounds(torch.zeros(1, dtype=torch.float32))
    length = budget.num_obj * hidden + hidden + hidden * budget.dim + budget.dim
    state = {"ideal": torch.full((budget.num_obj,), math.inf, dtype=torch.float64)}

    def fitness(weights: Tensor) -> Tensor:
        prefs = uniform_simplex(prefs_per_step, budget.num_obj, generator).float()
        x = psl_network(weights, prefs, hidden, lower, upper)
        f = budget.evaluate(x.reshape(-1, budget.dim).double())
        state["ideal"] = running_ideal(state["ideal"], f)
        rep = prefs.repeat(len(weights), 1).double()
        return tchebycheff(f, rep, state["ideal"]).view(len(weights), -1).mean(dim=1).float()

    problem = Problem(
        "min",
        fitness,
        solution_length=length,
        initial_bounds=(-0.5, 0.5),
        vectorized=True,
        seed=seed,
    )
    searcher = PGPE(
        problem,
        popsize=popsize,
        center_learning_rate=center_lr,
        stdev_learning_rate=0.1,
        stdev_init=stdev_init,
        optimizer="adam",
        ranking_method="centered",
    )
    while budget.remaining >= popsize * prefs_per_step:
        searcher.step()
    return {"center": searcher.status["center"]}
