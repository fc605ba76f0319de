"""Learning rules derived as optimal control: derived coefficients against the classical rules.

Checks and figures for docs/learning_rules.md: (1) finite-horizon Riccati vs scipy's DARE;
(2) the one-step rule is GD with the optimal step (isotropic H) and tends to the natural gradient
as moves get cheap; (3) momentum: the heavy-ball rule optimal over N steps for an unknown
eigenbasis (β grows with N), and the LQG controller's exact heavy-ball form under noisy
gradients; (4) the Bayesian curvature belief against Adam's √v̂.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run learning_rules_derivation

writes learning_rules_derivation.{json,md} and
docs/figures/learning_rules_*.png (a few seconds on one core).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.linalg

from optiforge.algorithms.learning_rules import (
    finite_horizon_lqr,
    infer_curvature,
    lqg_momentum,
    one_step_preconditioner,
    optimal_linear_rule,
    polyak_heavy_ball,
    simulate_lqg,
)
from optiforge.benchmarks.figures import new_figure, save
from optiforge.benchmarks.harness import Benchmark, Run

HORIZONS = [1, 2, 3, 5, 10, 20, 50, 100, 200]


def riccati_check(seed: int) -> float:
    """Largest relative gap between the 500-step recursion's cost-to-go and scipy's DARE over
    five random stabilizable systems."""
    rng = np.random.default_rng(seed)
    gaps = []
    for _ in range(5):
        a, b = rng.standard_normal((3, 3)) * 0.5, rng.standard_normal((3, 2))
        root = rng.standard_normal((3, 3))
        q, r = root @ root.T + np.eye(3), np.eye(2) * rng.uniform(0.1, 2)
        _, costs = finite_horizon_lqr(a, b, q, r, 500)
        exact = scipy.linalg.solve_discrete_are(a, b, q, r)
        gaps.append(float(np.abs(costs[1] - exact).max() / np.abs(exact).max()))
    return max(gaps)


def one_step(figures: Path) -> dict:
    """GD step vs 1/(h + 1/η), and the natural-gradient gap ‖M/η - G⁻¹‖ / ‖G⁻¹‖ against η."""
    eye = np.eye(3)
    gd = []
    for h in (0.5, 1.0, 4.0):
        for eta in (0.1, 1.0, np.inf):
            step = float(one_step_preconditioner(h * eye, eye, eta)[0, 0])
            gd.append({"h": h, "eta": eta, "derived": step, "closed_form": 1 / (h + 1 / eta)})
    hessian = np.array([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]])
    metric = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.0], [0.0, 0.0, 0.5]])
    etas = np.geomspace(1e-4, 10, 11)
    inverse = np.linalg.inv(metric)
    gaps = [
        float(
            np.linalg.norm(one_step_preconditioner(hessian, metric, e) / e - inverse)
            / np.linalg.norm(inverse)
        )
        for e in etas
    ]
    figure = new_figure(2)
    left, right = figure.axes
    hs = np.linspace(0.2, 5, 50)
    for eta in (0.1, 1.0, np.inf):
        left.plot(hs, 1 / (hs + 1 / eta), label=f"closed form 1/(h + 1/η), η={eta}")
        derived = [one_step_preconditioner(h * eye, eye, eta)[0, 0] for h in hs[::5]]
        left.plot(hs[::5], derived, "o", color=left.lines[-1].get_color())
    left.set(xlabel="curvature h", ylabel="GD step", title="one-step LQR (dots) = GD step")
    left.legend(fontsize=8)
    right.loglog(etas, gaps, "o-")
    right.set(
        xlabel="η (control cost R = G/η)",
        ylabel="‖M/η − G⁻¹‖ / ‖G⁻¹‖",
        title="one-step rule → natural gradient as η → 0",
    )
    save(figure, figures / "learning_rules_one_step.png")
    return {"gd": gd, "natural_gradient": {"eta": etas.tolist(), "relative_gap": gaps}}


def momentum(figures: Path) -> dict:
    """Optimal heavy-ball (α, β) vs horizon for an unknown eigenbasis, and LQG's closed form."""
    eigenvalues = np.geomspace(0.01, 1.0, 50)
    search = [
        dict(zip(("alpha", "beta"), optimal_linear_rule(eigenvalues, n), strict=True))
        for n in HORIZONS
    ]
    polyak_alpha, polyak_beta = polyak_heavy_ball(0.01, 1.0)
    gd_step = float(np.sum(eigenvalues**2) / np.sum(eigenvalues**3))
    lqg = []
    for r in (0.0, 0.1, 0.5, 2.0):
        for n in (1, 2, 5, 50):
            rule = lqg_momentum(1.0, r, 0.01, 0.1, n)
            u, y = simulate_lqg(1.0, r, 0.01, 0.1, n, steps=200)
            fitted, *_ = np.linalg.lstsq(np.stack([u[:-1], -y[1:]], 1), u[1:], rcond=None)
            lqg.append(
                {
                    "control_cost": r,
                    "horizon": n,
                    "beta_closed_form": rule.beta,
                    "beta_fitted": float(fitted[0]),
                    "lr_closed_form": rule.lr,
                    "lr_fitted": float(fitted[1]),
                }
            )
    figure = new_figure(2)
    left, right = figure.axes
    left.semilogx(HORIZONS, [s["beta"] for s in search], "o-", label="β* (optimal over N steps)")
    left.axhline(polyak_beta, ls="--", color="gray", label=f"Polyak β = {polyak_beta:.2f}")
    left.semilogx(HORIZONS, [s["alpha"] / 10 for s in search], "s-", label="α* / 10")
    left.axhline(gd_step / 10, ls=":", color="k", label="GD optimal step / 10 (N = 1)")
    left.set(xlabel="horizon N", title="unknown eigenbasis, λ ∈ [0.01, 1]")
    left.legend(fontsize=8)
    for r in (0.1, 0.5, 2.0):
        rows = [row for row in lqg if row["control_cost"] == r]
        line = right.plot(
            [row["horizon"] for row in rows],
            [row["beta_closed_form"] for row in rows],
            "-",
            label=f"closed form β, r = {r}",
        )
        right.plot(
            [row["horizon"] for row in rows],
            [row["beta_fitted"] for row in rows],
            "x",
            color=line[0].get_color(),
        )
    right.set(xscale="log", xlabel="horizon N", ylabel="β", title="LQG (noisy gradients), x = fit")
    right.legend(fontsize=8)
    save(figure, figures / "learning_rules_momentum.png")
    return {
        "eigenvalues": "50 log-spaced in [0.01, 1]",
        "search": [{"horizon": n, **s} for n, s in zip(HORIZONS, search, strict=True)],
        "gd_optimal_step": gd_step,
        "polyak": {"alpha": polyak_alpha, "beta": polyak_beta},
        "lqg": lqg,
    }


def adaptive(figures: Path, seed: int) -> dict:
    """E[h] from the Gamma belief against the true curvature and against Adam's √v̂ / s."""
    rng = np.random.default_rng(seed)
    h, scale, steps = np.geomspace(0.01, 100, 9), 0.5, 4000
    belief = infer_curvature(h * scale * rng.standard_normal((steps, h.size)), scale, beta2=0.995)
    ratio = belief.adam_curvature / belief.mean_curvature  # derived step / Adam step
    figure = new_figure(2)
    left, right = figure.axes
    left.loglog(h, belief.mean_curvature[-1], "o", label="E[h] (Bayes)")
    left.loglog(h, belief.adam_curvature[-1], "x", label="√v̂ / s (Adam)")
    left.loglog(h, h, "k--", label="true h")
    left.set(xlabel="true curvature h", ylabel="estimate", title=f"after {steps} steps")
    left.legend(fontsize=8)
    t = np.arange(1, steps + 1)
    right.semilogx(t, ratio.mean(axis=1), label="mean over coordinates")
    right.set(xlabel="step t", ylabel="Bayes step / Adam step", title="built-in warm-up")
    right.legend(fontsize=8)
    save(figure, figures / "learning_rules_adaptive.png")
    return {
        "true_h": h.tolist(),
        "bayes_h": belief.mean_curvature[-1].tolist(),
        "adam_h": belief.adam_curvature[-1].tolist(),
        "step_ratio_at": {str(k): float(ratio[k - 1].mean()) for k in (1, 2, 5, 20, 100, 4000)},
    }


def markdown(record: dict) -> str:
    """The tables of docs/learning_rules.md."""
    lines = [
        f"Riccati recursion (500 steps) vs scipy DARE, max relative gap: {record['riccati']:.1e}",
        "",
        "| horizon N | α* | β* |",
        "|---:|---:|---:|",
    ]
    lines += [
        f"| {s['horizon']} | {s['alpha']:.4f} | {s['beta']:.4f} |"
        for s in record["momentum"]["search"]
    ]
    m = record["momentum"]
    lines += [
        "",
        f"GD optimal step (N = 1 closed form): {m['gd_optimal_step']:.4f}; Polyak heavy ball: "
        f"α = {m['polyak']['alpha']:.4f}, β = {m['polyak']['beta']:.4f}",
        "",
        "| LQG control cost r | N | β closed form | β fitted | α closed form | α fitted |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['control_cost']} | {r['horizon']} | {r['beta_closed_form']:.6f} | "
        f"{r['beta_fitted']:.6f} | {r['lr_closed_form']:.6f} | {r['lr_fitted']:.6f} |"
        for r in m["lqg"]
    ]
    a = record["adaptive"]
    lines += ["", "| true h | Bayes E[h] | Adam √v̂/s |", "|---:|---:|---:|"]
    lines += [
        f"| {h:.3g} | {b:.3g} | {d:.3g} |"
        for h, b, d in zip(a["true_h"], a["bayes_h"], a["adam_h"], strict=True)
    ]
    lines += ["", "| step t | Bayes step / Adam step |", "|---:|---:|"]
    lines += [f"| {k} | {v:.3f} |" for k, v in a["step_ratio_at"].items()]
    gaps = record["one_step"]["natural_gradient"]
    lines += ["", "| η | ‖M/η − G⁻¹‖/‖G⁻¹‖ |", "|---:|---:|"]
    lines += [
        f"| {e:.0e} | {g:.2e} |" for e, g in zip(gaps["eta"], gaps["relative_gap"], strict=True)
    ]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Config:
    seed: int = 0


def main(run: Run, args: Config) -> None:
    """Run every check, write JSON / Markdown and the figures."""
    record = {
        "riccati": riccati_check(args.seed),
        "one_step": one_step(run.figure_dir),
        "momentum": momentum(run.figure_dir),
        "adaptive": adaptive(run.figure_dir, args.seed),
    }
    run.write("learning_rules_derivation", record, markdown(record))


BENCHMARK = Benchmark("learning_rules_derivation", main, Config, smoke={})

if __name__ == "__main__":
    BENCHMARK.main()
