"""Bias and variance of zeroth-order gradient estimators against the analytic gradient.

Two objectives in float64: the quadratic x^T A^T A x (d = 20, condition number of A^T A = 100)
and the logistic loss of scikit-learn's digits 3-vs-8 (d = 64 pixels / 16, 357 images), each at
a fixed random point x. For each perturbation step mu and estimator, M independent estimates
(each cell from its own seed, so no two cells share draws): the telescoping constructions
(Ma & Huang; v uniform on the sqrt(d) sphere, geometric c = 0.5 and Zipf s = 3 schedules with
the optimal pairing; drawn as tensors by `zo_batched.draw`), the forward two-point estimator
(f(x + mu v) - f(x)) / mu * v and MeZO's central estimator with Gaussian z. Reported per cell:

- directional bias: mean of P - v^T grad f(x) (the error of the scalar against the exact
  directional derivative), with a 95 % confidence interval (1.96 standard errors);
- gradient bias along grad f: mean of (g_hat - grad f) . grad f / |grad f|^2, with its 95 % CI,
  computed as the mean of (P - v^T grad f) (v^T grad f) / |grad f|^2 (E[(v^T g) v] = g exactly, so
  subtracting it changes no mean and removes the direction-sampling noise of order sqrt(d));
- relative MSE E|g_hat - grad f|^2 / |grad f|^2 and the mean number of function evaluations.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run zeroth_order_bias [--samples 300000] \
        [--logistic-samples 100000]

writes zeroth_order_bias.{json,md} and its figure.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from sklearn.datasets import load_digits

from optiforge.benchmarks.figures import new_figure, save
from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table
from optiforge.optimizers.zo_batched import draw
from optiforge.optimizers.zo_perturbation import derive_seed
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
CHUNK = 20000  # draws evaluated at once


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
    name: str, f: Objective, x: torch.Tensor, mu: float, samples: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`samples` scalar estimates P_i, their directions v_i [samples, d] and the evaluations of
    each draw."""
    d = x.numel()
    z = torch.randn(samples, d, generator=generator, dtype=torch.float64)
    if name == "central (MeZO)":
        points = torch.cat([x + mu * z, x - mu * z])
        values = f(points).view(2, samples)
        return (values[0] - values[1]) / (2 * mu), z, torch.full((samples,), 2.0)
    v = z * (math.sqrt(d) / z.norm(dim=1, keepdim=True))
    if name == "two-point forward":
        values = f(torch.cat([x[None], x + mu * v]))
        return (values[1:] - values[0]) / mu, v, torch.full((samples,), 2.0)
    construction, schedule_name = name.split()
    schedule = Zipf(mu, 3.0) if schedule_name == "zipf" else Geometric(mu, 0.5)
    draws = draw(construction, schedule, samples, generator)
    values = torch.empty(samples, 4, dtype=torch.float64)
    values[:, 0] = f(x[None])[0]
    for slot in (1, 2, 3):
        values[:, slot] = f(x + draws.offsets[:, slot, None] * v)
    return (draws.coefficients * values).sum(1), v, draws.evaluations().double()


def per_draw(
    scalars: torch.Tensor, directions: torch.Tensor, grad: torch.Tensor
) -> dict[str, torch.Tensor]:
    """Per draw: P - v^T grad f; its along-gradient part (P - v^T grad f) v^T grad f / |grad f|^2
    ((g_hat - (v.g) v) . g / |g|^2: the same mean as (g_hat - g) . g / |g|^2, since
    E[(v.g) v] = g, without the direction-sampling noise); |g_hat - g|^2 / |g|^2."""
    exact = directions @ grad
    errors = scalars - exact
    g_hat = scalars[:, None] * directions
    return {
        "directional": errors,
        "along": errors * exact / grad.dot(grad),
        "squared": (g_hat - grad).square().sum(1) / grad.dot(grad),
    }


def summarize(parts: dict[str, torch.Tensor]) -> dict[str, float]:
    """Directional and along-gradient bias with 95 % half-widths, and the relative MSE."""
    root = math.sqrt(parts["directional"].numel())
    return {
        "directional_bias": float(parts["directional"].mean()),
        "directional_ci95": 1.96 * float(parts["directional"].std()) / root,
        "gradient_bias": float(parts["along"].mean()),
        "gradient_ci95": 1.96 * float(parts["along"].std()) / root,
        "relative_mse": float(parts["squared"].mean()),
    }


def cell(
    name: str, f: Objective, x: torch.Tensor, grad: torch.Tensor, mu: float, samples: int,
    seed: int,
) -> dict[str, float]:  # fmt: skip
    """One (problem, mu, estimator) cell from its own generator, drawn in chunks."""
    generator = torch.Generator().manual_seed(seed)
    chunks: dict[str, list[torch.Tensor]] = {"directional": [], "along": [], "squared": []}
    evaluations = 0.0
    for start in range(0, samples, CHUNK):
        size = min(CHUNK, samples - start)
        scalars, directions, evals = estimates(name, f, x, mu, size, generator)
        for key, values in per_draw(scalars, directions, grad).items():
            chunks[key].append(values)
        evaluations += float(evals.sum())
    stats = summarize({key: torch.cat(values) for key, values in chunks.items()})
    return {"evals": evaluations / samples, **stats}


def bias_rows(samples: dict[str, int]) -> list[dict[str, object]]:
    """Every (problem, mu, estimator) cell, each from an independent seed; `samples` estimates
    per cell of each problem."""
    rows = []
    problems = {"quadratic": quadratic(), "logistic": logistic()}
    for problem_index, (problem, (f, x)) in enumerate(problems.items()):
        grad = gradient(f, x)
        for mu_index, mu in enumerate(MUS):
            for index, name in enumerate(ESTIMATORS):
                seed = derive_seed(problem_index, mu_index, index)
                stats = cell(name, f, x, grad, mu, samples[problem], seed)
                rows.append({"problem": problem, "mu": mu, "estimator": name, **stats})
                print(
                    f"{problem:9s} mu={mu:<6g} {name:18s} evals={stats['evals']:4.2f} "
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


def contrasts(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """Per (problem, mu) and P4 / P3 estimator: is its directional bias told apart from the
    forward two-point one's? Resolved when the two 95 % intervals do not overlap."""
    forward = {(r["problem"], r["mu"]): r for r in rows if r["estimator"] == "two-point forward"}
    found = []
    for r in rows:
        if str(r["estimator"]).split()[0] not in ("P4", "P3"):
            continue
        other = forward[(r["problem"], r["mu"])]
        gap = abs(float(other["directional_bias"]) - float(r["directional_bias"]))
        found.append({
            "problem": r["problem"], "mu": r["mu"], "estimator": r["estimator"],
            "bias": r["directional_bias"], "ci95": r["directional_ci95"],
            "forward_bias": other["directional_bias"], "forward_ci95": other["directional_ci95"],
            "resolved": gap > float(r["directional_ci95"]) + float(other["directional_ci95"]),
        })  # fmt: skip
    return found


CONTRAST_COLUMNS = [
    Column("problem", "problem"),
    Column("mu", "mu", "g"),
    Column("estimator", "estimator"),
    Column("its directional bias", lambda r: f"{r['bias']:+.2e} ± {r['ci95']:.1e}"),
    Column("forward two-point", lambda r: f"{r['forward_bias']:+.2e} ± {r['forward_ci95']:.1e}"),
    Column("intervals apart", "resolved"),
]


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
    samples: int = 300_000  # estimates per cell on the quadratic
    logistic_samples: int = 100_000  # per cell on the logistic loss (357 samples per evaluation)


def main(run: Run, args: Config) -> None:
    samples = {"quadratic": args.samples, "logistic": args.logistic_samples}
    rows = bias_rows(samples)
    title = (
        f"# Zeroth-order estimator bias ({args.samples} estimates per cell on the quadratic, "
        f"{args.logistic_samples} on the logistic loss, float64)"
    )
    apart = contrasts(rows)
    payload = {"samples": samples, "mus": list(MUS), "rows": rows, "contrasts": apart}
    text = (
        f"{title}\n\n{INTRO}\n\n{markdown_table(rows, COLUMNS)}\n\n"
        "Telescoping against forward two-point directional bias (95 % intervals apart or not):"
        f"\n\n{markdown_table(apart, CONTRAST_COLUMNS)}"
    )
    run.write("zeroth_order_bias", payload, text)
    plot(rows, run.figure("zeroth_order_bias.png"))


BENCHMARK = Benchmark(
    "zeroth_order_bias", main, Config, smoke=dict(samples=50, logistic_samples=50)
)

if __name__ == "__main__":
    BENCHMARK.main()
