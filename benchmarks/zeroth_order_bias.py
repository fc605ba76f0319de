"""Bias and variance of zeroth-order gradient estimators against the analytic gradient.

Two objectives in float64: the quadratic x^T A^T A x (d = 20, condition number of A^T A = 100)
and the logistic loss of scikit-learn's digits 3-vs-8 (d = 64 pixels / 16, 357 images), each at
a fixed random point x. For each perturbation step mu and estimator, M independent estimates:
the telescoping constructions (Ma & Huang; v uniform on the sqrt(d) sphere, geometric c = 0.5
and Zipf s = 3 schedules with the optimal pairing), the forward two-point estimator
(f(x + mu v) - f(x)) / mu * v and MeZO's central estimator with Gaussian z. Reported per cell:

- directional bias: mean of P - v^T grad f(x) (the error of the scalar against the exact
  directional derivative), with a 95 % confidence interval (1.96 standard errors);
- gradient bias along grad f: mean of (g_hat - grad f) . grad f / |grad f|^2, with its 95 % CI,
  computed as the mean of (P - v^T grad f) (v^T grad f) / |grad f|^2 (E[(v^T g) v] = g exactly, so
  subtracting it changes no mean and removes the direction-sampling noise of order sqrt(d));
- relative MSE E|g_hat - grad f|^2 / |grad f|^2 and the mean number of function evaluations.

    OMP_NUM_THREADS=1 python -m benchmarks run zeroth_order_bias [--samples 20000]

writes zeroth_order_bias.{json,md} and its figure.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from sklearn.datasets import load_digits

from benchmarks.figures import new_figure, save
from benchmarks.harness import Benchmark, Column, Run, markdown_table
from optiforge.optimizers.zo_estimators import evaluations, sample_terms
from optiforge.optimizers.zo_schedules import Geometric, Zipf

MUS = (1e-3, 1e-2, 1e-1, 0.3, 1.0)
ESTIMATORS = (
    "P4 zipf",
    "P4 geometric",
    "P3 zipf",
    "P3 geometric",
    "P2 zipf",
    "P1 zipf",
    "two-point forward",
    "central (MeZO)",
)
Objective = Callable[[torch.Tensor], torch.Tensor]  # points [k, d] -> values [k]


def quadratic(d: int = 20, condition: float = 100.0) -> tuple[Objective, torch.Tensor]:
    """f(x) = x^T A^T A x, singular values of A from 1 to sqrt(condition); gradient 2 A^T A x."""
    generator = torch.Generator().manual_seed(0)
    q1, _ = torch.linalg.qr(torch.randn(d, d, generator=generator, dtype=torch.float64))
    q2, _ = torch.linalg.qr(torch.randn(d, d, generator=generator, dtype=torch.float64))
    singular = torch.logspace(0, 0.5 * math.log10(condition), d, dtype=torch.float64)
    a = q1 @ torch.diag(singular) @ q2.T
    gram = a.T @ a
    x = torch.randn(d, generator=generator, dtype=torch.float64) / math.sqrt(d)
    return (lambda points: torch.einsum("kd,de,ke->k", points, gram, points)), x


def logistic() -> tuple[Objective, torch.Tensor]:
    """Mean logistic loss of digits 3 (label -1) vs 8 (label +1), pixels / 16."""
    digits = load_digits()
    keep = (digits.target == 3) | (digits.target == 8)
    features = torch.tensor(digits.data[keep] / 16.0, dtype=torch.float64)
    labels = torch.tensor(digits.target[keep] == 8, dtype=torch.float64) * 2 - 1
    x = torch.randn(64, generator=torch.Generator().manual_seed(1), dtype=torch.float64) * 0.1
    return (lambda points: torch.nn.functional.softplus(-(points @ features.T) * labels).mean(1)), x


def gradient(f: Objective, x: torch.Tensor) -> torch.Tensor:
    leaf = x.clone().requires_grad_()
    (grad,) = torch.autograd.grad(f(leaf[None])[0], leaf)
    return grad


def estimates(
    name: str, f: Objective, x: torch.Tensor, mu: float, samples: int, seed: int
) -> tuple[torch.Tensor, torch.Tensor, float]:
    """M scalar estimates P_i, their directions v_i [M, d], and the mean evaluations."""
    generator = torch.Generator().manual_seed(seed)
    d = x.numel()
    z = torch.randn(samples, d, generator=generator, dtype=torch.float64)
    if name == "central (MeZO)":
        points = torch.cat([x + mu * z, x - mu * z])
        values = f(points).view(2, samples)
        return (values[0] - values[1]) / (2 * mu), z, 2.0
    v = z * (math.sqrt(d) / z.norm(dim=1, keepdim=True))
    if name == "two-point forward":
        values = f(torch.cat([x[None], x + mu * v]))
        return (values[1:] - values[0]) / mu, v, 2.0
    construction, schedule_name = name.split()
    schedule = Zipf(mu, 3.0) if schedule_name == "zipf" else Geometric(mu, 0.5)
    draws = [sample_terms(construction, schedule, generator) for _ in range(samples)]
    rows = torch.tensor([i for i, terms in enumerate(draws) for _ in terms])
    offsets = torch.tensor([t for terms in draws for t, _ in terms], dtype=torch.float64)
    coefficients = torch.tensor([c for terms in draws for _, c in terms], dtype=torch.float64)
    values = f(x + offsets[:, None] * v[rows])
    scalars = torch.zeros(samples, dtype=torch.float64).index_add_(0, rows, coefficients * values)
    return scalars, v, sum(evaluations(t) for t in draws) / samples


def summarize(
    scalars: torch.Tensor, directions: torch.Tensor, grad: torch.Tensor
) -> dict[str, float]:
    """Directional and along-gradient bias with 95 % half-widths, and the relative MSE."""
    errors = scalars - directions @ grad
    exact = directions @ grad
    g_hat = scalars[:, None] * directions
    along = errors * exact / grad.dot(grad)  # (g_hat - (v.g) v) . g / |g|^2, same mean, less noise
    root = math.sqrt(scalars.numel())
    return {
        "directional_bias": float(errors.mean()),
        "directional_ci95": 1.96 * float(errors.std()) / root,
        "gradient_bias": float(along.mean()),
        "gradient_ci95": 1.96 * float(along.std()) / root,
        "relative_mse": float((g_hat - grad).square().sum(1).mean() / grad.dot(grad)),
    }


def bias_rows(samples: int) -> list[dict[str, object]]:
    rows = []
    for problem, (f, x) in {"quadratic": quadratic(), "logistic": logistic()}.items():
        grad = gradient(f, x)
        for mu in MUS:
            for index, name in enumerate(ESTIMATORS):
                scalars, directions, evals = estimates(name, f, x, mu, samples, seed=index)
                stats = summarize(scalars, directions, grad)
                rows.append(
                    {"problem": problem, "mu": mu, "estimator": name, "evals": evals, **stats}
                )
                print(
                    f"{problem:9s} mu={mu:<6g} {name:18s} evals={evals:4.2f} "
                    f"dir.bias={stats['directional_bias']:+.3e}±{stats['directional_ci95']:.1e} "
                    f"grad.bias={stats['gradient_bias']:+.3e}±{stats['gradient_ci95']:.1e} "
                    f"rel.MSE={stats['relative_mse']:.3e}"
                )
    return rows


COLUMNS = [
    Column("problem", "problem"),
    Column("mu", "mu", "g"),
    Column("estimator", "estimator"),
    Column("evals", "evals", ".2f"),
    Column(
        "directional bias", lambda r: f"{r['directional_bias']:+.2e} ± {r['directional_ci95']:.1e}"
    ),
    Column("gradient bias", lambda r: f"{r['gradient_bias']:+.2e} ± {r['gradient_ci95']:.1e}"),
    Column("relative MSE", "relative_mse", ".2e"),
]
INTRO = (
    "Directional bias: mean of P - v^T grad f; gradient bias: mean of (g_hat - grad f) . "
    "grad f / |grad f|^2 (as the mean of (P - v^T grad f) v^T grad f / |grad f|^2); both with "
    "95 % CI half-widths. Relative MSE: E|g_hat - grad f|^2 / |grad f|^2."
)


def plot(rows: list[dict[str, object]], path: Path) -> Path:
    """|directional bias| against mu per estimator (P2 / P1 left out: no finite mean)."""
    figure = new_figure(2)
    for axis, problem in zip(figure.axes, ("quadratic", "logistic"), strict=True):
        for name in ESTIMATORS[:4] + ESTIMATORS[-2:]:
            cells = [r for r in rows if r["problem"] == problem and r["estimator"] == name]
            mus = [r["mu"] for r in cells]
            bias = [abs(r["directional_bias"]) + 1e-18 for r in cells]
            errors = [r["directional_ci95"] for r in cells]
            axis.errorbar(mus, bias, yerr=errors, marker="o", capsize=3, label=name)
        axis.set(xscale="log", yscale="log", xlabel="mu", ylabel="|mean of P - v.grad f|")
        axis.set_title(f"{problem}: directional bias (95 % CI)")
        axis.legend(fontsize=7)
    return save(figure, path)


@dataclass(frozen=True)
class Config:
    samples: int = 20000  # estimates per cell


def main(run: Run, args: Config) -> None:
    rows = bias_rows(args.samples)
    title = f"# Zeroth-order estimator bias ({args.samples} estimates per cell, float64)"
    payload = {"samples": args.samples, "mus": list(MUS), "rows": rows}
    run.write(
        "zeroth_order_bias", payload, f"{title}\n\n{INTRO}\n\n{markdown_table(rows, COLUMNS)}"
    )
    plot(rows, run.figure("zeroth_order_bias.png"))


BENCHMARK = Benchmark("zeroth_order_bias", main, Config, smoke=dict(samples=50))

if __name__ == "__main__":
    BENCHMARK.main()
