"""Mean squared error of zeroth-order gradient estimates against the dimension, at equal budgets
of function evaluations (the synthetic experiment of Ma & Huang 2025).

Two objectives per dimension d, in float64, at a random point x (N(0, I / d)):
f(x) = x^T A^T A x with the entries of A [d, d] uniform in [-1, 1], and the mean logistic loss of
200 samples with standard Gaussian features and labels sign(features . w), w ~ N(0, I).
The estimators (telescoping ones on the sqrt(d) sphere, as in the paper; two-point ones with a
Gaussian direction or on the sphere):

- P4 and P3 with the geometric (c = 0.5) and Zipf (s = 3) schedules, both with the
  variance-optimal pairing p_n = (mu_n - mu_{n+1}) / mu_1, mu_1 = mu;
- forward two-point (f(x + mu v) - f(x)) / mu v and central two-point
  (f(x + mu v) - f(x - mu v)) / (2 mu) v.

A budget B is the most evaluations one gradient estimate may spend, f(x) shared by its
directions: k = B - 1 forward directions, floor(B / 2) central ones, one P3 draw (2 or 3
evaluations) and, at B = 4, one P4 draw (3 or 4). At B = 4, "P3 x2" also averages two P3 draws
(4 evaluations on average, 5 at most): the budget met in expectation. The estimate of a
budget is the mean of its k independent draws; relative MSE = E|g_hat - grad f|^2 / |grad f|^2
over `samples` estimates, with a 95 % CI half-width (1.96 standard errors).

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run zeroth_order_mse [--preset smoke]

writes zeroth_order_mse.{json,md} and the figure zeroth_order_mse.png.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from optiforge.benchmarks.figures import new_figure, save
from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table
from optiforge.optimizers.zo_batched import draw
from optiforge.optimizers.zo_perturbation import derive_seed
from optiforge.optimizers.zo_schedules import Geometric, Zipf

Objective = Callable[[torch.Tensor], torch.Tensor]  # points [k, d] -> values [k]
F64 = torch.float64
BUDGETS = (3, 4)
# estimator -> {budget: draws averaged}; the two-point ones share f(x) between their draws
ESTIMATORS: dict[str, dict[int, int]] = {
    "P3 zipf": {3: 1, 4: 1},
    "P3 geometric": {3: 1, 4: 1},
    "P3 zipf x2": {4: 2},
    "P3 geometric x2": {4: 2},
    "P4 zipf": {4: 1},
    "P4 geometric": {4: 1},
    "forward Gaussian": {3: 2, 4: 3},
    "forward sphere": {3: 2, 4: 3},
    "central Gaussian": {3: 1, 4: 2},
    "central sphere": {3: 1, 4: 2},
}
CHUNK_ENTRIES = 1 << 21  # points x dimension held at once (16 MiB of float64)


def quadratic(d: int, generator: torch.Generator) -> tuple[Objective, torch.Tensor]:
    """x^T A^T A x, entries of A uniform in [-1, 1]; the point x ~ N(0, I / d)."""
    a = torch.rand(d, d, generator=generator, dtype=F64) * 2 - 1
    x = torch.randn(d, generator=generator, dtype=F64) / math.sqrt(d)
    return (lambda points: (points @ a.T).square().sum(1)), x


def logistic(
    d: int, generator: torch.Generator, samples: int = 200
) -> tuple[Objective, torch.Tensor]:
    """Mean logistic loss, standard Gaussian features, labels sign(features . w)."""
    features = torch.randn(samples, d, generator=generator, dtype=F64)
    labels = torch.sign(features @ torch.randn(d, generator=generator, dtype=F64))
    x = torch.randn(d, generator=generator, dtype=F64) / math.sqrt(d)
    margins = features * labels[:, None]
    return (lambda points: torch.nn.functional.softplus(-(points @ margins.T)).mean(1)), x


PROBLEMS = {"quadratic": quadratic, "logistic": logistic}


def gradient(f: Objective, x: torch.Tensor) -> torch.Tensor:
    """grad f(x) by autograd."""
    leaf = x.clone().requires_grad_()
    (grad,) = torch.autograd.grad(f(leaf[None])[0], leaf)
    return grad


def directions(kind: str, count: int, d: int, generator: torch.Generator) -> torch.Tensor:
    """[count, d] Gaussian directions, or uniform on the sphere of radius sqrt(d)."""
    z = torch.randn(count, d, generator=generator, dtype=F64)
    return z if kind == "Gaussian" else z * (math.sqrt(d) / z.norm(dim=1, keepdim=True))


def scalar_draws(
    name: str, f: Objective, x: torch.Tensor, mu: float, count: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`count` draws of one estimator: scalars P [count], directions v [count, d], and the
    evaluations of each draw with f(x) counted once per draw [count]."""
    family, kind = name.split()[:2]
    if family in ("forward", "central"):
        v = directions(kind, count, x.numel(), generator)
        if family == "forward":
            return (f(x + mu * v) - f(x[None])) / mu, v, torch.full((count,), 2.0)
        return (f(x + mu * v) - f(x - mu * v)) / (2 * mu), v, torch.full((count,), 2.0)
    schedule = Zipf(mu, 3.0) if kind == "zipf" else Geometric(mu, 0.5)
    draws = draw(family, schedule, count, generator)
    v = directions("sphere", count, x.numel(), generator)
    values = torch.empty(count, 4, dtype=F64)
    values[:, 0] = f(x[None])[0]
    for slot in (1, 2, 3):
        values[:, slot] = f(x + draws.offsets[:, slot, None] * v)
    return (draws.coefficients * values).sum(1), v, draws.evaluations().double()


def squared_errors(
    name: str, f: Objective, x: torch.Tensor, grad: torch.Tensor, mu: float, samples: int,
    per_estimate: int, generator: torch.Generator,
) -> tuple[torch.Tensor, float, float]:  # fmt: skip
    """|g_hat - grad f|^2 / |grad f|^2 of `samples` estimates, each the mean of `per_estimate`
    draws; the mean and the largest evaluations per estimate (f(x) shared by its draws)."""
    chunk = max(1, CHUNK_ENTRIES // (4 * x.numel() * per_estimate))
    errors, evaluations = [], []
    for start in range(0, samples, chunk):
        size = min(chunk, samples - start)
        scalars, v, evals = scalar_draws(name, f, x, mu, size * per_estimate, generator)
        estimate = (scalars[:, None] * v).view(size, per_estimate, -1).mean(1)
        errors.append((estimate - grad).square().sum(1) / grad.dot(grad))
        shared = 0.0 if name.startswith("central") else 1.0  # f(x), counted once per estimate
        evaluations.append(evals.view(size, per_estimate).sum(1) - shared * (per_estimate - 1))
    spent = torch.cat(evaluations)
    return torch.cat(errors), float(spent.mean()), float(spent.max())


def mse_rows(dims: tuple[int, ...], mus: tuple[float, ...], samples: int, run: Run) -> list[dict]:
    """One row per (problem, d, mu, budget, estimator)."""
    rows = []
    for problem_index, (problem, build) in enumerate(PROBLEMS.items()):
        for d in dims:
            f, x = build(d, torch.Generator().manual_seed(derive_seed(problem_index, d)))
            grad = gradient(f, x)
            for mu_index, mu in enumerate(mus):
                for index, (name, per_budget) in enumerate(ESTIMATORS.items()):
                    cache: dict[int, tuple[torch.Tensor, float, float]] = {}
                    for budget, k in per_budget.items():
                        if k not in cache:  # equal k at both budgets: the same estimates
                            seed = derive_seed(problem_index, d, mu_index, index, k)
                            generator = torch.Generator().manual_seed(seed)
                            cache[k] = squared_errors(name, f, x, grad, mu, samples, k, generator)
                        errors, mean_evals, max_evals = cache[k]
                        rows.append({
                            "problem": problem, "d": d, "mu": mu, "budget": budget,
                            "estimator": name, "draws": k, "mean_evals": mean_evals,
                            "max_evals": max_evals, "relative_mse": float(errors.mean()),
                            "ci95": 1.96 * float(errors.std()) / math.sqrt(samples),
                        })  # fmt: skip
                    run.log(f"{problem} d={d} mu={mu:g} {name}: {rows[-1]['relative_mse']:.3g}")
    return rows


def best_at_budget(rows: list[dict]) -> list[dict]:
    """Per (problem, mu, budget, d), the estimator of lowest relative MSE among those whose
    largest evaluation count fits the budget, and the runner-up."""
    cells: dict[tuple, list[dict]] = {}
    for row in rows:
        if row["max_evals"] <= row["budget"]:
            key = (row["problem"], row["mu"], row["budget"], row["d"])
            cells.setdefault(key, []).append(row)
    ranked = []
    for (problem, mu, budget, d), members in cells.items():
        first, second = sorted(members, key=lambda r: r["relative_mse"])[:2]
        ranked.append({
            "problem": problem, "mu": mu, "budget": budget, "d": d,
            "best": first["estimator"], "best_mse": first["relative_mse"],
            "runner_up": second["estimator"], "runner_up_mse": second["relative_mse"],
        })  # fmt: skip
    return ranked


def plot(rows: list[dict], mu: float, path: Path) -> Path:
    """Relative MSE against d, one panel per (problem, budget), at one mu."""
    figure = new_figure(len(BUDGETS), len(PROBLEMS), width=5.5, height=4.2)
    panels = [(p, b) for p in PROBLEMS for b in BUDGETS]
    for axis, (problem, budget) in zip(figure.axes, panels, strict=True):
        for name in ESTIMATORS:
            cells = [r for r in rows if (r["problem"], r["mu"], r["budget"], r["estimator"])
                     == (problem, mu, budget, name)]  # fmt: skip
            if cells:
                style = "--" if name.startswith(("forward", "central")) else "-"
                axis.errorbar([r["d"] for r in cells], [r["relative_mse"] for r in cells],
                              yerr=[r["ci95"] for r in cells], linestyle=style, marker="o",
                              capsize=2, label=name)  # fmt: skip
        axis.set(xscale="log", yscale="log", xlabel="dimension d", ylabel="relative MSE")
        axis.set_title(f"{problem}, budget {budget}, mu = {mu:g}")
        axis.legend(fontsize=6)
    return save(figure, path)


def wide(rows: list[dict]) -> tuple[list[dict], list[Column]]:
    """The cells as one row per (problem, mu, budget, estimator), one column per d."""
    table: dict[tuple, dict] = {}
    for r in rows:
        key = (r["problem"], r["mu"], r["budget"], r["estimator"])
        entry = table.setdefault(key, {k: r[k] for k in ("problem", "mu", "budget", "estimator")})
        entry["evals"] = f"{r['mean_evals']:.2f} / {r['max_evals']:.0f}"
        entry[r["d"]] = f"{r['relative_mse']:.3g} ± {r['ci95']:.2g}"
    dims = sorted({r["d"] for r in rows})
    columns = [Column(k, k) for k in ("problem", "mu", "budget", "estimator")]
    columns.append(Column("evals (mean / max)", "evals"))
    columns += [Column(f"d = {d}", lambda e, d=d: e.get(d, "")) for d in dims]
    return list(table.values()), columns


BEST_COLUMNS = [
    Column("problem", "problem"),
    Column("mu", "mu", "g"),
    Column("budget", "budget"),
    Column("d", "d"),
    Column("lowest MSE", lambda r: f"{r['best']} ({r['best_mse']:.3g})"),
    Column("runner-up", lambda r: f"{r['runner_up']} ({r['runner_up_mse']:.3g})"),
]


@dataclass(frozen=True)
class Config:
    dims: tuple[int, ...] = (10, 30, 100, 300, 1000)
    mus: tuple[float, ...] = (1e-3, 1e-2, 0.1)
    samples: int = 10000  # gradient estimates per cell


def main(run: Run, args: Config) -> None:
    rows = mse_rows(args.dims, args.mus, args.samples, run)
    ranked = best_at_budget(rows)
    title = f"# Zeroth-order gradient estimators: relative MSE against d ({args.samples} estimates)"
    text = (
        f"{title}\n\nWithin the budget (largest evaluation count <= budget):\n\n"
        f"{markdown_table(ranked, BEST_COLUMNS)}\n\nAll cells (relative MSE ± 95 % CI):\n\n"
        f"{markdown_table(*wide(rows))}"
    )
    payload = {"samples": args.samples, "dims": list(args.dims), "mus": list(args.mus),
               "rows": rows, "best": ranked}  # fmt: skip
    run.write("zeroth_order_mse", payload, text)
    plot(rows, args.mus[-1], run.figure("zeroth_order_mse.png"))


BENCHMARK = Benchmark(
    "zeroth_order_mse", main, Config, smoke=dict(dims=(4, 8), mus=(0.1,), samples=64)
)

if __name__ == "__main__":
    BENCHMARK.main()
