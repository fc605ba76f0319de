"""Fine-tuning at equal function evaluations: zeroth-order optimizers against backprop.

The digits CNN of configs/default.yaml (widths 32, 64; 19.5 K parameters) is pretrained with
backprop (AdamW, lr 3e-3, 300 steps of 64) on scikit-learn digits 0-4, then fine-tuned on digits 5-9
(60 / 20 / 20 % train / validation / test split of those images, seeded) with each optimizer for the
same budget of forward evaluations (6000 by default) on batches of 64: MeZO, TelescopingZO P3
(geometric and Zipf) and P4 (Zipf), and backprop AdamW as the ceiling (one forward + one backward
per step, counted as one evaluation). Two modes: `head` tunes only the linear head (650 parameters,
the backbone frozen, like MeZO's parameter-efficient modes) and `full` tunes every weight. The
learning rate (and the telescoping mu_1) is picked on the validation split with seed 0 from a small
grid, then every method runs 3 seeds; test accuracy is recorded every 500 evaluations.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run zeroth_order_finetune [--budget 6000]
        [--seeds 0 1 2]
    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run zeroth_order_finetune --model transformer

`--model transformer` does the same with the classifier's small transformer (image rows as
tokens, width 32, 2 pre-norm layers; 18.0 K parameters, head 330). Writes
zeroth_order_finetune{,_transformer}.{json,md} and .png.
"""

from __future__ import annotations

import copy
import functools
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import torch
from sklearn.datasets import load_digits
from torch import nn

from optiforge.benchmarks.figures import new_figure, save
from optiforge.benchmarks.harness import Benchmark, Run
from optiforge.lightning_modules.classifier_nets import small_cnn, small_transformer
from optiforge.optimizers import MeZO, TelescopingZO

BATCH, EVERY = 64, 500
# wide enough that the best lr is inside the grid for every method (a grid whose every
# entry is too small reads as "ZO cannot fine-tune", which is wrong)
LRS = {"head": (1e-4, 3e-4, 1e-3, 3e-3), "full": (3e-5, 1e-4, 3e-4, 1e-3)}
MUS = (1e-2, 1e-1)
METHODS = ("backprop AdamW", "MeZO", "P3 geometric", "P3 zipf", "P4 zipf")
Data = tuple[torch.Tensor, torch.Tensor]


def split_digits(seed: int) -> tuple[Data, dict[str, Data]]:
    """Digits 0-4 (pretraining) and the seeded train / val / test split of digits 5-9."""
    digits = load_digits()
    images = torch.tensor(digits.images, dtype=torch.float32)[:, None] / 16.0
    labels = torch.tensor(digits.target)
    old = labels < 5
    new_x, new_y = images[~old], labels[~old]
    order = torch.randperm(len(new_y), generator=torch.Generator().manual_seed(seed))
    cut = [int(0.6 * len(order)), int(0.8 * len(order))]
    parts = dict(zip(("train", "val", "test"), order.tensor_split(cut), strict=True))
    return (images[old], labels[old]), {k: (new_x[i], new_y[i]) for k, i in parts.items()}


NETWORKS = {
    "cnn": lambda: small_cnn((1, 8, 8), 10, (32, 64), 0.0),
    "transformer": lambda: small_transformer((1, 8, 8), 10, (32, 32), 0.0),
}


def pretrained(old: Data, network: str) -> nn.Sequential:
    """The network after 300 AdamW steps on digits 0-4 (seed 0, the same start for every
    run)."""
    torch.manual_seed(0)
    model = NETWORKS[network]()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    generator = torch.Generator().manual_seed(0)
    for _ in range(300):
        rows = torch.randint(len(old[1]), (BATCH,), generator=generator)
        loss = nn.functional.cross_entropy(model(old[0][rows]), old[1][rows])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model


def batch_loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of one batch (the closure: forward only for the ZO optimizers)."""
    return nn.functional.cross_entropy(model(x), y)


def accuracy(model: nn.Module, data: Data) -> float:
    with torch.no_grad():
        return float((model(data[0]).argmax(1) == data[1]).float().mean())


def build(method: str, params: list[nn.Parameter], lr: float, mu: float, seed: int):
    if method == "backprop AdamW":
        return torch.optim.AdamW(params, lr=lr)
    if method == "MeZO":
        return MeZO(params, lr=lr, eps=1e-3, seed=seed)
    construction, schedule = method.split()
    return TelescopingZO(
        params, lr=lr, construction=construction, schedule=schedule, mu=mu, seed=seed
    )


def finetune(
    method: str,
    base: nn.Sequential,
    parts: dict[str, Data],
    mode: str,
    lr: float,
    mu: float,
    seed: int,
    budget: int,
    score: str,
) -> list[float]:
    """Accuracy on `parts[score]` after every EVERY evaluations (NaN once the loss diverged).
    In `head` mode the frozen backbone's features are computed once and only the head runs."""
    model = nn.Sequential(*[copy.deepcopy(layer) for layer in base])
    if mode == "head":
        with torch.no_grad():
            parts = {k: (model[:-1](x), y) for k, (x, y) in parts.items()}
        model = model[-1:]
    params = list(model.parameters())
    optimizer = build(method, params, lr, mu, seed)
    generator = torch.Generator().manual_seed(seed)
    x, y = parts["train"]
    curve, evaluations = [], 0
    while len(curve) < budget // EVERY:
        rows = torch.randint(len(y), (BATCH,), generator=generator)
        closure = functools.partial(batch_loss, model, x[rows], y[rows])
        if method == "backprop AdamW":
            optimizer.zero_grad()
            loss = closure()
            loss.backward()
            optimizer.step()
            evaluations += 1
        else:
            loss = optimizer.step(closure)
            evaluations = optimizer.evaluations
        finite = math.isfinite(float(loss.detach())) and all(p.isfinite().all() for p in params)
        while len(curve) < evaluations // EVERY and len(curve) < budget // EVERY:
            curve.append(accuracy(model, parts[score]) if finite else float("nan"))
        if not finite:
            curve += [float("nan")] * (budget // EVERY - len(curve))
    return curve


def tune(method: str, base, parts, mode: str, budget: int) -> tuple[float, float]:
    """(lr, mu) with the best final validation accuracy at seed 0."""
    lrs = (1e-3, 3e-3, 1e-2) if method == "backprop AdamW" else LRS[mode]
    mus = MUS if method.startswith("P") else (1e-3,)
    scores = {}
    for lr in lrs:
        for mu in mus:
            final = finetune(method, base, parts, mode, lr, mu, 0, budget, "val")[-1]
            scores[(lr, mu)] = -1.0 if math.isnan(final) else final
    return max(scores, key=scores.get)


def finetune_rows(
    network: str, budget: int, seeds: list[int], args: Config
) -> list[dict[str, object]]:
    old, parts = split_digits(0)
    base = pretrained(old, network)
    size = sum(p.numel() for p in base.parameters())
    start = accuracy(base, parts["test"])
    Run.log(f"pretrained {network}: {size} parameters, acc on digits 5-9 test = {start:.3f}")
    rows = []
    for mode in args.modes:
        for method in args.methods:
            lr, mu = tune(method, base, parts, mode, budget)
            curves = [finetune(method, base, parts, mode, lr, mu, s, budget, "test") for s in seeds]
            finals = [c[-1] for c in curves]
            row = {
                "mode": mode,
                "method": method,
                "lr": lr,
                "mu": mu,
                "curves": curves,
                "final_mean": statistics.fmean(finals),
                "final_std": statistics.stdev(finals) if len(finals) > 1 else 0.0,
            }
            rows.append(row)
            Run.log(f"{mode:4s} {method:15s} lr={lr:g} mu={mu:g} final test acc {finals}")
    return rows


def markdown(rows: list[dict[str, object]], network: str, budget: int, seeds: list[int]) -> str:
    checkpoints = list(range(EVERY, budget + 1, EVERY))
    shown = [i for i, c in enumerate(checkpoints) if (i + 1) % max(1, len(checkpoints) // 4) == 0]
    checkpoints = [checkpoints[i] for i in shown]
    head = " | ".join(f"{c} evals" for c in checkpoints)
    lines = [
        f"# Fine-tuning the digits {network} 0-4 -> 5-9 at equal evaluations (seeds {seeds}, "
        f"batch {BATCH})",
        "",
        "Test accuracy on digits 5-9, mean ± std over seeds; lr (and mu_1) picked on validation "
        "with seed 0; mu is MeZO's eps for MeZO and unused by AdamW.",
        "",
        f"| mode | method | lr | mu | {head} |",
        "|---|---|---|---|" + "---|" * len(checkpoints),
    ]
    for r in rows:
        cells = []
        for i in shown:
            values = [c[i] for c in r["curves"]]
            std = statistics.stdev(values) if len(values) > 1 else 0.0
            cells.append(f"{statistics.fmean(values):.3f} ± {std:.3f}")
        lines.append(
            f"| {r['mode']} | {r['method']} | {r['lr']:g} | {r['mu']:g} | {' | '.join(cells)} |"
        )
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, object]], path: Path) -> Path:
    figure = new_figure(2)
    for axis, mode in zip(figure.axes, ("head", "full"), strict=True):
        for r in (r for r in rows if r["mode"] == mode):
            curves = torch.tensor(r["curves"])
            x = [EVERY * (i + 1) for i in range(curves.shape[1])]
            axis.plot(x, curves.mean(0).tolist(), marker="o", label=r["method"])
        axis.set(xlabel="function evaluations", ylabel="test accuracy (digits 5-9)")
        axis.set_title(
            "fine-tuning the head only" if mode == "head" else "fine-tuning every weight"
        )
        axis.legend(fontsize=8)
    return save(figure, path)


@dataclass(frozen=True)
class Config:
    budget: int = 6000
    seeds: tuple[int, ...] = (0, 1, 2)
    model: Literal["cnn", "transformer"] = "cnn"
    modes: tuple[Literal["head", "full"], ...] = ("head", "full")
    methods: tuple[Literal[METHODS], ...] = METHODS


def main(run: Run, args: Config) -> None:
    seeds = list(args.seeds)
    rows = finetune_rows(args.model, args.budget, seeds, args)
    name = "zeroth_order_finetune" + ("" if args.model == "cnn" else f"_{args.model}")
    payload = {"model": args.model, "budget": args.budget, "seeds": seeds, "batch": BATCH}
    run.write(name, {**payload, "rows": rows}, markdown(rows, args.model, args.budget, seeds))
    plot(rows, run.figure(f"{name}.png"))


BENCHMARK = Benchmark(
    "zeroth_order_finetune",
    main,
    Config,
    smoke=dict(budget=500, seeds=(0,), modes=("head",), methods=("MeZO",)),
)

if __name__ == "__main__":
    BENCHMARK.main()
