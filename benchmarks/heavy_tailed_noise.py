"""Heavy-tailed noise on F(x) = ½‖x‖², d = 10: first-order baselines vs NSGDHess / Clip NSGDHess.

Reproduces the synthetic experiment of Sadiev, Richtárik, Fatkhullin (2025), arXiv 2510.10690, and
checks its claim that Clip NSGDHess has the best high-probability behaviour: the 95th percentile of
‖∇F(x_T)‖ = ‖x_T‖ over seeds.

Noise. Every coordinate is s·(U^(-1/a) - 1)·R with U ~ U(0, 1], R = ±1 (fair), a = 1.1: U^(-1/a) is
Pareto(a) on [1, ∞), minus 1 it is Lomax, P(|noise| > s t) = (1 + t)^(-a); the random sign makes
it symmetric, so it has mean zero, finite moments of order p' < 1.1 only, infinite variance.
Gradient oracle: ∇F(x) + ξ with ξ ∈ R^d of such coordinates. Hessian oracle: I + Ξ, Ξ a random
symmetric matrix whose entries Ξ_ij = Ξ_ji (i <= j) are such variables. s = `--noise-scale` (1)
for both. Each oracle call draws fresh noise, so the gradient at x_t and the Hessian at x̂_t are
independent samples.

The oracle is the closure: it builds f(y) = ½‖y‖² + ξᵀy + ½(y - x̄)ᵀΞ(y - x̄), x̄ = y.detach(), whose
gradient at y = x̄ is x̄ + ξ and whose Hessian is I + Ξ, so NSGDHess and ClipNSGDHess (hvp="autograd")
get exactly these samples, and the baselines read the same gradient oracle from `.grad`.

Methods: SGD (torch.optim.SGD), clipped SGD, NSGD, NSGD with momentum (explicit rules below),
NSGDHess, Clip NSGDHess (project optimizers). Every run starts at x_0 = (1, ..., 1), runs T steps
with a constant step size, and is repeated over seeds (one tiny parameter per seed: the methods'
norms are global, so a [seeds, d] tensor would mix seeds). Tuning: every grid point of a method is
run on `--tune-seeds` separate seeds; the one with the lowest median ‖x_T‖ is then evaluated on the
`--seeds` report seeds, which never took part in tuning. Percentiles: torch.quantile (linear).
Budget: T iterations for every method; per iteration the baselines use one gradient sample, the
NSGDHess pair one gradient and one Hessian-vector sample (two closure calls). Clip NSGDHess uses a
fixed λ_h = `--hess-clip` (2: twice ‖∇²F u‖ = 1 of the noiseless Hessian).

Run from the project root: `python -m optiforge.benchmarks run heavy_tailed_noise`
(T = 1000, 100 seeds;
writes heavy_tailed_noise.{json,md}; `--wandb` also logs a W&B run, offline
unless credentials exist).
"""

from __future__ import annotations

import itertools
import json
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import torch
from torch import Tensor, nn

from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table
from optiforge.optimizers import ClipNSGDHess, NSGDHess, wants_graph

TAIL_INDEX = 1.1
DIM = 10
F64 = torch.float64


def two_sided_pareto(shape: Sequence[int], generator: torch.Generator, scale: float) -> Tensor:
    """Symmetric heavy-tailed noise s·(U^(-1/a) - 1)·R of `shape`; E|·|^p' < ∞ iff p' < a = 1.1."""
    uniform = 1.0 - torch.rand(shape, generator=generator, dtype=F64)  # in (0, 1]
    sign = torch.randint(0, 2, shape, generator=generator, dtype=F64) * 2.0 - 1.0
    return scale * (uniform.pow(-1.0 / TAIL_INDEX) - 1.0) * sign


class NoisyQuadratic:
    """Stochastic oracle of F(x) = ½‖x‖²: gradient x + ξ, Hessian I + Ξ, fresh noise per call.

    Noise is drawn `chunk` calls at a time (one tensor op instead of one per call); the sequence
    is fixed by the generator's seed.
    """

    def __init__(
        self, generator: torch.Generator, grad_scale: float, hess_scale: float, chunk: int = 1024
    ) -> None:
        self.generator = generator
        self.grad_scale = grad_scale
        self.hess_scale = hess_scale
        self.chunk = chunk
        self.calls = 0
        self._xi = torch.empty(0, DIM, dtype=F64)
        self._big_xi = torch.empty(0, DIM, DIM, dtype=F64)

    def _refill(self) -> None:
        """ξ [chunk, d] and symmetric Ξ [chunk, d, d] with iid entries on and above the diagonal."""
        self._xi = two_sided_pareto((self.chunk, DIM), self.generator, self.grad_scale)
        upper = two_sided_pareto((self.chunk, DIM, DIM), self.generator, self.hess_scale).triu()
        self._big_xi = upper + upper.triu(1).transpose(1, 2)

    def __call__(self, y: Tensor) -> Tensor:
        """f(y) = ½‖y‖² + ξᵀy + ½(y - x̄)ᵀΞ(y - x̄) for y [d], x̄ = y.detach()."""
        index = self.calls % self.chunk
        if index == 0:
            self._refill()
        self.calls += 1
        offset = y - y.detach()
        return (
            0.5 * (y * y).sum() + self._xi[index] @ y + 0.5 * offset @ self._big_xi[index] @ offset
        )


class Stepper(Protocol):
    """Anything with torch's `step(closure)` and `zero_grad()`."""

    def step(self, closure: Callable[[], Tensor]) -> Tensor | None: ...

    def zero_grad(self, set_to_none: bool = True) -> None: ...


class ExplicitRule(torch.optim.Optimizer):
    """Base of the small explicit baselines: one closure call, then `update(x, gradient)`."""

    def __init__(self, params: list[nn.Parameter], lr: float) -> None:
        super().__init__(params, {"lr": lr})

    @torch.no_grad()
    def step(self, closure: Callable[[], Tensor]) -> Tensor:
        """Evaluate the oracle at x_t, then move each parameter by the rule."""
        with torch.enable_grad():
            loss = closure()
        for group in self.param_groups:
            for x in group["params"]:
                self.update(x, x.grad, group["lr"])
        return loss

    def update(self, x: Tensor, gradient: Tensor, lr: float) -> None:
        """Move `x` in place given its stochastic gradient; each baseline defines its rule."""
        raise NotImplementedError


class ClippedSGD(ExplicitRule):
    """x_{t+1} = x_t - γ clip(g_t, λ), clip(g, λ) = min{1, λ/‖g‖} g."""

    def __init__(self, params: list[nn.Parameter], lr: float, clip: float) -> None:
        super().__init__(params, lr)
        self.clip = clip

    def update(self, x: Tensor, gradient: Tensor, lr: float) -> None:
        norm = gradient.norm().item()
        x.sub_(gradient, alpha=lr * (self.clip / norm if norm > self.clip else 1.0))


class NSGDM(ExplicitRule):
    """m_t = (1 - α) m_{t-1} + α g_t (m_0 = g_0), x_{t+1} = x_t - γ m_t/‖m_t‖; α = 1 is NSGD."""

    def __init__(self, params: list[nn.Parameter], lr: float, alpha: float) -> None:
        super().__init__(params, lr)
        self.alpha = alpha

    def update(self, x: Tensor, gradient: Tensor, lr: float) -> None:
        state = self.state[x]
        if "momentum" not in state:
            state["momentum"] = gradient.clone()
        else:
            state["momentum"].lerp_(gradient, self.alpha)
        norm = state["momentum"].norm().item()
        if norm > 0:
            x.sub_(state["momentum"], alpha=lr / norm)


@dataclass(frozen=True)
class Method:
    """A method, its hyperparameter grid (lr always), and how to build it for one seed."""

    name: str
    grid: dict[str, tuple[float, ...]]
    build: Callable[[list[nn.Parameter], dict[str, float], int], Stepper]

    def grid_points(self) -> list[dict[str, float]]:
        keys = sorted(self.grid)
        return [
            dict(zip(keys, values, strict=True))
            for values in itertools.product(*(self.grid[key] for key in keys))
        ]


def methods(
    lrs: tuple[float, ...], alphas: tuple[float, ...], clips: tuple[float, ...], hess_clip: float
) -> list[Method]:
    """The six compared methods; Clip NSGDHess uses the fixed Hessian level `hess_clip`."""
    return [
        Method("SGD", {"lr": lrs}, lambda p, h, s: torch.optim.SGD(p, lr=h["lr"])),
        Method("clipped SGD", {"lr": lrs, "clip": clips}, lambda p, h, s: ClippedSGD(p, **h)),
        Method("NSGD", {"lr": lrs}, lambda p, h, s: NSGDM(p, lr=h["lr"], alpha=1.0)),
        Method("NSGDM", {"lr": lrs, "alpha": alphas}, lambda p, h, s: NSGDM(p, **h)),
        Method("NSGDHess", {"lr": lrs, "alpha": alphas}, lambda p, h, s: NSGDHess(p, **h, seed=s)),
        Method(
            "Clip NSGDHess",
            {"lr": lrs, "alpha": alphas, "grad_clip": clips},
            lambda p, h, s: ClipNSGDHess(p, **h, hess_clip=hess_clip, seed=s),
        ),
    ]


def final_gradient_norm(
    method: Method, hyper: dict[str, float], seed: int, steps: int, noise_scale: float
) -> float:
    """‖∇F(x_T)‖ = ‖x_T‖ after `steps` steps from x_0 = (1, ..., 1) with noise seed `seed`."""
    x = nn.Parameter(torch.ones(DIM, dtype=F64))
    optimizer = method.build([x], hyper, seed)
    oracle = NoisyQuadratic(torch.Generator().manual_seed(seed), noise_scale, noise_scale)
    create_graph = wants_graph(optimizer)

    def closure() -> Tensor:
        optimizer.zero_grad()
        loss = oracle(x)
        loss.backward(create_graph=create_graph)
        return loss.detach()

    for _ in range(steps):
        optimizer.step(closure)
    norm = x.detach().norm().item()
    return norm if norm == norm else float("inf")  # a NaN iterate counts as diverged


def summarize(values: list[float]) -> dict[str, float]:
    """Median and 95th percentile (linear interpolation) of the final gradient norms."""
    tensor = torch.tensor(values, dtype=F64)
    return {
        "median": torch.quantile(tensor, 0.5).item(),
        "p95": torch.quantile(tensor, 0.95).item(),
    }


def evaluate(
    method: Method, steps: int, tune_seeds: range, seeds: range, noise_scale: float
) -> dict[str, object]:
    """Tune on `tune_seeds` by median, then report the best grid point on `seeds`."""
    tuning = []
    for hyper in method.grid_points():
        norms = [final_gradient_norm(method, hyper, s, steps, noise_scale) for s in tune_seeds]
        tuning.append({"hyper": hyper, **summarize(norms)})
    best = min(tuning, key=lambda row: row["median"])
    hyper = dict(best["hyper"])  # type: ignore[call-overload]
    norms = [final_gradient_norm(method, hyper, s, steps, noise_scale) for s in seeds]
    return {"best": hyper, **summarize(norms), "max": max(norms), "tuning": tuning}


COLUMNS = [
    Column("method", "name"),
    Column(
        "tuned hyperparameters", lambda r: ", ".join(f"{k}={v:g}" for k, v in r["best"].items())
    ),
    Column("median ‖∇F(x_T)‖", "median", ".4f", rule="---:"),
    Column("p95 ‖∇F(x_T)‖", "p95", ".4f", rule="---:"),
    Column("max", "max", ".3g", rule="---:"),
]


def log_to_wandb(config: dict[str, object], results: dict[str, dict[str, object]]) -> None:
    """One W&B run with the config, a summary table and per-method summary metrics."""
    import wandb

    from optiforge.callbacks.wandb_logger import resolve_wandb_mode

    run = wandb.init(
        project="optiforge",
        job_type="benchmark",
        name="heavy_tailed_noise",
        mode=resolve_wandb_mode("auto"),
        config=config,
    )
    table = wandb.Table(columns=["method", "hyperparameters", "median", "p95", "max"])
    for name, row in results.items():
        table.add_data(name, json.dumps(row["best"]), row["median"], row["p95"], row["max"])
        run.summary[f"{name}/median"] = row["median"]
        run.summary[f"{name}/p95"] = row["p95"]
    run.log({"heavy_tailed_noise": table})
    run.finish()


@dataclass(frozen=True)
class Config:
    """T iterations per run, report seeds 0..seeds-1, disjoint tuning seeds, the tuning grid,
    λ_h of Clip NSGDHess and the noise scale s."""

    steps: int = 1000
    seeds: int = 100
    tune_seeds: int = 20
    lrs: tuple[float, ...] = (0.003, 0.01, 0.03, 0.1, 0.3)
    alphas: tuple[float, ...] = (0.01, 0.1, 0.3)
    clips: tuple[float, ...] = (1.0, 10.0)
    hess_clip: float = 2.0
    noise_scale: float = 1.0
    wandb: bool = False

    def __post_init__(self) -> None:
        if min(self.steps, self.seeds, self.tune_seeds) < 1:
            raise ValueError("steps, seeds and tune_seeds must be >= 1")


def main(run: Run, args: Config) -> None:
    # Expected with create_graph=True; NSGDHess detaches the gradients after every step.
    warnings.filterwarnings("ignore", message=r"Using backward\(\) with create_graph=True")
    seeds = range(args.seeds)
    tune_seeds = range(10_000, 10_000 + args.tune_seeds)
    config: dict[str, object] = {
        "problem": f"F(x) = 0.5 ||x||^2, d = {DIM}, x_0 = ones",
        "noise": (
            f"per coordinate s*(U^(-1/{TAIL_INDEX}) - 1)*random sign, s = {args.noise_scale}; "
            "gradient + xi (vector), Hessian I + Xi (symmetric matrix, iid entries i <= j)"
        ),
        "tail_index": TAIL_INDEX,
        "steps": args.steps,
        "report_seeds": [seeds.start, seeds.stop - 1],
        "tune_seeds": [tune_seeds.start, tune_seeds.stop - 1],
        "grid": {"lr": args.lrs, "alpha": args.alphas, "clip": args.clips},
        "hess_clip": args.hess_clip,
        "tuning_criterion": "lowest median ||grad F(x_T)|| on the tuning seeds",
    }
    results: dict[str, dict[str, object]] = {}
    for method in methods(args.lrs, args.alphas, args.clips, args.hess_clip):
        start = time.perf_counter()
        results[method.name] = evaluate(method, args.steps, tune_seeds, seeds, args.noise_scale)
        results[method.name]["seconds"] = time.perf_counter() - start
        row = results[method.name]
        run.log(f"{method.name:>14}: median {row['median']:.4f}  p95 {row['p95']:.4f}")

    best_p95 = min(results, key=lambda name: results[name]["p95"])  # type: ignore[arg-type,return-value]
    header = (
        f"Heavy-tailed noise (tail index {TAIL_INDEX}) on F(x) = ½‖x‖², d = {DIM}, "
        f"T = {args.steps}, {args.seeds} report seeds, {args.tune_seeds} tuning seeds. "
        f"Lowest p95: {best_p95}."
    )
    rows = [{"name": name, **row} for name, row in results.items()]
    payload = {"config": config, "results": results, "lowest_p95": best_p95}
    run.write("heavy_tailed_noise", payload, f"{header}\n\n{markdown_table(rows, COLUMNS)}")
    if args.wandb:
        log_to_wandb(config, results)


BENCHMARK = Benchmark(
    "heavy_tailed_noise",
    main,
    Config,
    smoke=dict(steps=10, seeds=2, tune_seeds=2, lrs=(0.01,), alphas=(0.1,), clips=(1.0,)),
)

if __name__ == "__main__":
    BENCHMARK.main()
