"""Demographic parity on COMPAS (Barthakur & Chamon): unconstrained vs penalty grid vs
equality-constrained primal-dual, logistic regression and an MLP, several seeds; and the same
problem solved with Cooper (PyPI `cooper-optim`) against our `DualAscent` in one plain torch loop.

    python -m optiforge.benchmarks run equality_constrained_fairness [--seeds 0 1 2] [--steps 4000]
        [--wandb]

Part 1 runs `train.py fit` on configs/constrained/compas_fair_logreg.yaml with overrides (model,
mode, penalty weight), tested at the final weights: test accuracy and test parity gaps (hard
predictions, max over groups of |P(yhat=1 | g) - P(yhat=1)|) for race and sex.

Part 2 (the peer): the same model, data, steps and learning rates in a plain torch loop, once
unconstrained, once with `optiforge.optimizers.DualAscent`, once with Cooper's
`SimultaneousOptimizer` (Lagrangian formulation, dual SGD with maximize=True). Both primal-dual runs
apply the same simultaneous update, so their multipliers must agree; the per-step overhead over the
unconstrained loop is the cost of the constraint machinery (best of `--repeats` timings).

Writes equality_constrained_fairness.json and .md.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from optiforge.benchmarks.cli_runs import fit_and_test
from optiforge.benchmarks.harness import Benchmark, Column, Run, markdown_table, mean_std
from optiforge.benchmarks.harness.registry import RESULTS
from optiforge.datamodules.compas_fairness import CompasFairnessDataModule
from optiforge.lightning_modules.classifier_nets import mlp
from optiforge.lightning_modules.constrained.fair_classifier import (
    fairness_metrics,
    parity_residuals,
)
from optiforge.optimizers import DualAscent, equality

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "constrained" / "compas_fair_logreg.yaml"
MODELS: dict[str, list[int]] = {"logreg": [], "mlp": [64]}
PENALTY_WEIGHTS = (1.0, 10.0, 100.0)
PRIMAL_LR = {"logreg": 0.2, "mlp": 0.01}
DUAL_LR = 0.01
TEMPERATURE = 8.0
METRICS = ("acc", "parity_gap/race", "parity_gap/sex", "parity_residual_max/race")


def methods() -> dict[str, list[str]]:
    """CLI overrides per method (the config itself is the primal-dual method)."""
    table = {"unconstrained": ["--model.constraint_mode", "none"]}
    for weight in PENALTY_WEIGHTS:
        table[f"penalty w={weight:g}"] = [
            "--model.constraint_mode",
            "penalty",
            "--model.penalty_weight",
            str(weight),
        ]
    table["equality-constrained (ours)"] = []
    return table


def lightning_run(model: str, overrides: list[str], seed: int, steps: int) -> dict[str, float]:
    """Fit and test one configuration: test metrics at the final weights plus seconds."""
    settings = [
        "--trainer.max_epochs",
        str(max(1, steps // 200)),
        "--model.hidden_sizes",
        json.dumps(MODELS[model]),
        "--optimizer.lr",
        str(PRIMAL_LR[model]),
    ]
    return fit_and_test(CONFIG, [*settings, *overrides], seed, METRICS)


def compas_tensors(
    seed: int,
) -> tuple[CompasFairnessDataModule, dict[str, tuple[torch.Tensor, ...]]]:
    data = CompasFairnessDataModule(seed=seed)
    data.setup("fit")
    return data, {split: data.splits[split].tensors for split in ("train", "test")}


def plain_loop(
    seed: int, model_name: str, steps: int, method: str
) -> tuple[float, dict[str, float], torch.Tensor | None]:
    """One plain torch run; returns (seconds per step, test metrics, final multipliers)."""
    data, tensors = compas_tensors(seed)
    x, y, groups = tensors["train"]
    sizes = {attribute: len(names) for attribute, names in data.group_names.items()}
    torch.manual_seed(seed)
    net = mlp((x.shape[1],), 1, tuple(MODELS[model_name]), dropout=0.0)
    primal = torch.optim.Adam(net.parameters(), lr=PRIMAL_LR[model_name])

    def objective_and_residuals() -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        logits = net(x).squeeze(-1)
        loss = F.binary_cross_entropy_with_logits(logits, y.float())
        probabilities = torch.sigmoid(logits)
        residuals = {
            f"parity_{attribute}": parity_residuals(
                probabilities, groups[:, column], sizes[attribute], TEMPERATURE
            )
            for column, attribute in enumerate(sizes)
        }
        return loss, residuals

    step, read_multipliers = make_step(method, primal, objective_and_residuals)
    start = time.perf_counter()
    for _ in range(steps):
        step()
    per_step = (time.perf_counter() - start) / steps
    x_test, y_test, groups_test = tensors["test"]
    with torch.no_grad():
        probabilities = torch.sigmoid(net(x_test).squeeze(-1))
    metrics = fairness_metrics(probabilities, y_test, groups_test, data.group_names, TEMPERATURE)
    return per_step, {name: float(metrics[name]) for name in METRICS}, read_multipliers()


def make_step(
    method: str,
    primal: torch.optim.Optimizer,
    objective_and_residuals: Callable[[], tuple[torch.Tensor, dict[str, torch.Tensor]]],
) -> tuple[Callable[[], None], Callable[[], torch.Tensor | None]]:
    """The training step of `method` and a reader of its final multipliers (sorted names)."""
    if method == "unconstrained":

        def step() -> None:
            primal.zero_grad()
            objective_and_residuals()[0].backward()
            primal.step()

        return step, lambda: None
    if method == "ours":
        duals = DualAscent(dual_lr=DUAL_LR)

        def step() -> None:
            loss, residuals = objective_and_residuals()
            constraints = {name: equality(value) for name, value in residuals.items()}
            lagrangian = duals.lagrangian(loss, constraints)
            primal.zero_grad()
            lagrangian.backward()
            primal.step()
            duals.step()

        return step, lambda: torch.cat([duals.multipliers[n] for n in sorted(duals.multipliers)])
    return cooper_step(primal, objective_and_residuals)


def cooper_step(
    primal: torch.optim.Optimizer,
    objective_and_residuals: Callable[[], tuple[torch.Tensor, dict[str, torch.Tensor]]],
) -> tuple[Callable[[], None], Callable[[], torch.Tensor | None]]:
    """The same problem as a Cooper CMP with one dense multiplier per parity constraint."""
    import cooper

    loss, residuals = objective_and_residuals()
    names = sorted(residuals)

    class ParityProblem(cooper.ConstrainedMinimizationProblem):
        def __init__(self) -> None:
            super().__init__()
            for name in names:  # attribute assignment registers a cooper.Constraint
                constraint = cooper.Constraint(
                    constraint_type=cooper.ConstraintType.EQUALITY,
                    formulation_type=cooper.formulations.Lagrangian,
                    multiplier=cooper.multipliers.DenseMultiplier(
                        num_constraints=residuals[name].numel()
                    ),
                )
                setattr(self, name, constraint)

        def compute_cmp_state(self) -> cooper.CMPState:
            loss, values = objective_and_residuals()
            observed = {
                constraint: cooper.ConstraintState(violation=values[name])
                for name, constraint in self.named_constraints()
            }
            return cooper.CMPState(loss=loss, observed_constraints=observed)

    problem = ParityProblem()
    dual = torch.optim.SGD(problem.dual_parameters(), lr=DUAL_LR, maximize=True)
    optimizer = cooper.optim.SimultaneousOptimizer(problem, primal, dual)

    def read() -> torch.Tensor:
        constraints = dict(problem.named_constraints())
        return torch.cat([constraints[name].multiplier.weight.detach() for name in names])

    return lambda: optimizer.roll(), read


def peer_comparison(seeds: list[int], steps: int, repeats: int) -> list[dict[str, object]]:
    rows = []
    for model_name in MODELS:
        for seed in seeds:
            times: dict[str, list[float]] = {"unconstrained": [], "ours": [], "cooper": []}
            finals: dict[str, tuple[dict[str, float], torch.Tensor | None]] = {}
            for _ in range(repeats):
                for method in times:  # interleaved, so drifts in machine load hit all three
                    per_step, metrics, multipliers = plain_loop(seed, model_name, steps, method)
                    times[method].append(per_step)
                    finals[method] = (metrics, multipliers)
            best = {method: min(values) for method, values in times.items()}
            ours_mu, cooper_mu = finals["ours"][1], finals["cooper"][1]
            assert ours_mu is not None and cooper_mu is not None
            overhead_ours = best["ours"] - best["unconstrained"]
            overhead_cooper = best["cooper"] - best["unconstrained"]
            row = {
                "model": model_name,
                "seed": seed,
                "ms_per_step": {m: 1e3 * t for m, t in best.items()},
                "overhead_ms": {"ours": 1e3 * overhead_ours, "cooper": 1e3 * overhead_cooper},
                "overhead_ratio_ours_over_cooper": overhead_ours / overhead_cooper,
                "step_time_ratio_ours_over_cooper": best["ours"] / best["cooper"],
                "max_multiplier_difference": float((ours_mu - cooper_mu).abs().max()),
                "test": {method: finals[method][0] for method in finals},
            }
            rows.append(row)
            print(
                f"peer {model_name} seed {seed}: ms/step unconstrained "
                f"{1e3 * best['unconstrained']:.3f} ours {1e3 * best['ours']:.3f} "
                f"cooper {1e3 * best['cooper']:.3f}; overhead ratio "
                f"{row['overhead_ratio_ours_over_cooper']:.2f}; |mu_ours - mu_cooper| "
                f"{row['max_multiplier_difference']:.2e}"
            )
    return rows


LIGHTNING_COLUMNS = [
    Column("model", "model"),
    Column("method", "method"),
    *(
        Column(header, lambda row, key=key: mean_std([run[key] for run in row["runs"]]))
        for header, key in zip(
            ("test acc", "test parity gap race", "test parity gap sex", "smoothed residual race"),
            METRICS,
            strict=True,
        )
    ),
    Column("s / run", lambda row: statistics.mean(run["seconds"] for run in row["runs"]), ".0f"),
]
PEER_COLUMNS = [
    Column("model", "model"),
    Column("seed", "seed"),
    Column("ms/step plain", lambda row: row["ms_per_step"]["unconstrained"], ".3f"),
    Column("ours", lambda row: row["ms_per_step"]["ours"], ".3f"),
    Column("Cooper", lambda row: row["ms_per_step"]["cooper"], ".3f"),
    Column("overhead ours / Cooper", "overhead_ratio_ours_over_cooper", ".2f"),
    Column("max abs(mu ours - mu Cooper)", "max_multiplier_difference", ".1e"),
    Column(
        "test gap race ours / Cooper",
        lambda row: " / ".join(
            f"{row['test'][m]['parity_gap/race']:.4f}" for m in ("ours", "cooper")
        ),
    ),
]


@dataclass(frozen=True)
class Config:
    """Seeds, full-batch steps per run, timings per peer method; `skip_lightning` reruns only
    the peer part and keeps the Lightning rows of the published file."""

    seeds: tuple[int, ...] = (0, 1, 2)
    steps: int = 4000
    repeats: int = 3
    skip_lightning: bool = False
    wandb: bool = False


def run(run: Run, args: Config) -> None:
    torch.set_num_threads(1)
    published = RESULTS / "equality_constrained_fairness.json"
    lightning_rows = []
    if args.skip_lightning and published.is_file():
        lightning_rows = json.loads(published.read_text())["lightning"]
    elif not args.skip_lightning:
        for model_name in MODELS:
            for method, overrides in methods().items():
                runs = [
                    lightning_run(model_name, overrides, seed, args.steps) for seed in args.seeds
                ]
                run.log(f"{model_name} {method}: acc {mean_std([r['acc'] for r in runs])}")
                lightning_rows.append({"model": model_name, "method": method, "runs": runs})
    peer_rows = peer_comparison(list(args.seeds), args.steps, args.repeats)
    config = {
        "seeds": list(args.seeds),
        "steps": args.steps,
        "primal_lr": PRIMAL_LR,
        "dual_lr": DUAL_LR,
        "temperature": TEMPERATURE,
        "models": MODELS,
        "torch_threads": 1,
    }
    result = {"config": config, "lightning": lightning_rows, "peer": peer_rows}
    table = (
        f"{markdown_table(lightning_rows, LIGHTNING_COLUMNS)}\n\n"
        f"{markdown_table(peer_rows, PEER_COLUMNS)}\n"
    )
    run.write("equality_constrained_fairness", result, table)
    if args.wandb:
        log_to_wandb(config, table)


def log_to_wandb(config: dict[str, object], table: str) -> None:
    """One W&B run holding the markdown tables (offline without credentials)."""
    import wandb

    from optiforge.callbacks.wandb_logger import resolve_wandb_mode

    run = wandb.init(
        project="optiforge",
        job_type="equality_constrained_fairness",
        config=config,
        mode=resolve_wandb_mode("auto"),
    )
    run.log({"tables": wandb.Html(f"<pre>{table}</pre>")})
    run.finish()


BENCHMARK = Benchmark(
    "equality_constrained_fairness",
    run,
    Config,
    smoke=dict(seeds=(0,), steps=5, repeats=1),
    peers=("cooper",),
)

if __name__ == "__main__":
    BENCHMARK.main()
