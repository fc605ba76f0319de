"""Hidden symmetries and relaxation: constrained vs relaxed vs free permutation networks.

    python -m optiforge.benchmarks run equivariant_landscape [--seeds 10] [--steps 4000] [--wandb]

Teacher-student regression (`optiforge.datamodules.PermutationTeacherDataModule`, invariant scalar
output, 2048 training and 4096 test samples) for each setting of SETTINGS: the teacher's and
the student's hidden representations, at n = 4 and 5 and two student widths. Per seed (teacher,
data and student initialization all seeded), with full-batch Adam (`--lr`):

- constrained: the tied student, 2 x `--steps` steps; at `--steps` (its end point, a critical
  point or close) the landscape of the unconstrained MLP there (`landscape_at`: gradient part
  outside the equivariant subspace, smallest Hessian eigenvalue inside and outside it);
- relaxed: the unconstrained MLP started exactly at the constrained student's initial point,
  2 x `--steps` steps without penalty;
- released: the constrained student's point after `--steps`, then `--steps` unconstrained
  steps (relaxation after the constrained run has converged: does it escape?);
- free: the unconstrained MLP with its own initialization, 2 x `--steps` steps.

Reported per setting and mode: median and 90th percentile of the relative test MSE
(mse / variance of the targets), the share of seeds "stuck" (relative test MSE above
`--stuck`), for released also the share that escaped (test MSE at least halved against the
constrained run of the same length), and the hidden representation each unconstrained run
ends nearer to: its own or the teacher's (padded to the student's width), by
`distance_to_rep`. The training loop is a plain torch loop over the module's own `objective`
(Lightning's per-step overhead would dominate a network of ~100 parameters); `train.py` runs
the same module under Lightning.
Writes equivariant_landscape.{json,md}.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
import torch
from torch.nn.functional import mse_loss

from optiforge.benchmarks.harness import Benchmark, Run
from optiforge.benchmarks.wandb_tables import log_tables
from optiforge.datamodules.permutation_teacher import PermutationTeacherDataModule
from optiforge.lightning_modules.equivariant.hidden_rep import rep_name
from optiforge.lightning_modules.equivariant.landscape import landscape_at
from optiforge.lightning_modules.equivariant.module import EquivariantRegressor
from optiforge.problems.equivariant.permutation_rep import PermutationRep

# name -> (n, teacher hidden blocks, student hidden blocks)
SETTINGS: dict[str, tuple[int, list[str], list[str]]] = {
    "n4 teacher 4 set, student 4 set": (4, ["set"] * 4, ["set"] * 4),
    "n4 teacher pairs, student 4 set": (4, ["pairs"], ["set"] * 4),
    "n4 teacher 4 set, student pairs": (4, ["set"] * 4, ["pairs"]),
    "n4 teacher pairs, student 6 set": (4, ["pairs"], ["set"] * 6),
    "n5 teacher pairs, student 5 set": (5, ["pairs"], ["set"] * 5),
}


def teacher_like(n: int, teacher: list[str], width: int) -> list[str]:
    """The teacher's hidden blocks, padded with set and trivial blocks to `width` neurons: the
    representation in which the student's free MLP can copy the teacher."""
    spare = width - PermutationRep.of(n, teacher).dim
    if spare < 0:
        raise ValueError(f"the teacher's hidden layer is wider than the student's ({width})")
    return [*teacher, *["set"] * (spare // n), *["trivial"] * (spare % n)]


def student(
    n: int, hidden: list[str], teacher: list[str], mode: str, seed: int
) -> EquivariantRegressor:
    """The student of `mode`; constrained and relaxed of one seed start at the same point. Its
    candidate hidden representations: its own and the teacher-like one (candidates of larger
    dimension are closer to any point, so comparing all of them would favour trivial blocks)."""
    torch.manual_seed(1000 + seed)
    width = PermutationRep.of(n, hidden).dim
    return EquivariantRegressor(
        n=n,
        in_blocks=("set",),
        hidden_blocks=tuple(hidden),
        out_blocks=("trivial",),
        mode=mode,
        candidate_hidden=[list(hidden), teacher_like(n, teacher, width)],
    )


def train(
    model: EquivariantRegressor, x: torch.Tensor, y: torch.Tensor, steps: int, lr: float
) -> None:
    """`steps` full-batch Adam steps on the module's objective."""
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for step in range(steps):
        optimizer.zero_grad(set_to_none=True)
        model.objective(x, y, step)[0].backward()
        optimizer.step()


def relative_mse(model: EquivariantRegressor, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return float(mse_loss(model(x), y) / y.var())


def nearest_rep(model: EquivariantRegressor) -> tuple[str, dict[str, float]]:
    """The candidate hidden representation the network is nearest to, and all distances."""
    distances = model.candidate_distances()
    best = min(distances, key=distances.get)
    return best.removeprefix("hidden_rep/"), distances


def run_seed(setting: tuple[int, list[str], list[str]], seed: int, args: Config) -> dict:
    n, teacher_hidden, student_hidden = setting
    data = PermutationTeacherDataModule(
        n=n, teacher_hidden_blocks=tuple(teacher_hidden), seed=seed, train_size=2048
    )
    (x, y), (x_test, y_test) = data.splits["train"], data.splits["test"]
    out: dict[str, object] = {}
    constrained = student(n, student_hidden, teacher_hidden, "constrained", seed)
    train(constrained, x, y, args.steps, args.lr)
    out["constrained@T"] = relative_mse(constrained, x_test, y_test)
    landscape = landscape_at(constrained.network, x, y)
    out["landscape"] = landscape
    released = student(n, student_hidden, teacher_hidden, "relaxed", seed)
    released.network.copy_dense_from(constrained.network)
    train(constrained, x, y, args.steps, args.lr)
    out["constrained"] = relative_mse(constrained, x_test, y_test)
    train(released, x, y, args.steps, args.lr)
    for name, model in (("released", released), ("relaxed", None), ("free", None)):
        if model is None:
            model = student(n, student_hidden, teacher_hidden, name, seed)
            train(model, x, y, 2 * args.steps, args.lr)
        out[name] = relative_mse(model, x_test, y_test)
        out[f"{name} nearest"], out[f"{name} distances"] = nearest_rep(model)
    return out


def summarize(runs: list[dict], args: Config, own: str, teacher: str) -> dict:
    """Medians, 90th percentiles, stuck and escape shares, nearest-representation counts."""
    summary: dict[str, object] = {}
    for mode in ("constrained", "relaxed", "released", "free"):
        values = np.array([r[mode] for r in runs])
        summary[f"{mode} median"] = float(np.median(values))
        summary[f"{mode} p90"] = float(np.percentile(values, 90))
        summary[f"{mode} stuck"] = float((values > args.stuck).mean())
    summary["released escaped"] = float(
        np.mean([r["released"] <= 0.5 * r["constrained"] for r in runs])
    )
    for mode in ("relaxed", "released", "free"):
        counts = Counter(r[f"{mode} nearest"] for r in runs)
        summary[f"{mode} nearest"] = dict(counts)
    landscapes = [r["landscape"] for r in runs]
    summary["constrained@T saddle share"] = float(
        np.mean([lc["hessian_negative_outside"] > 0 for lc in landscapes])
    )
    summary["grad outside (median)"] = float(
        np.median([lc["grad_outside_norm"] for lc in landscapes])
    )
    summary["grad inside (median)"] = float(
        np.median(
            [
                max(lc["grad_norm"] ** 2 - lc["grad_outside_norm"] ** 2, 0) ** 0.5
                for lc in landscapes
            ]
        )
    )
    summary["hessian min outside (median)"] = float(
        np.median([lc["hessian_min_outside"] for lc in landscapes])
    )
    summary["own rep"], summary["teacher rep"] = own, teacher
    return summary


def markdown(summaries: dict[str, dict], args: Config) -> tuple[str, list, list]:
    columns = [
        "setting",
        "constrained median / p90 / stuck",
        "relaxed median / p90 / stuck",
        "released median / stuck / escaped",
        "free median / p90 / stuck",
        "constrained@T: saddle share, min Hessian eig outside, grad inside / outside",
        "released ends nearest",
        "relaxed ends nearest",
    ]
    rows = []
    for name, s in summaries.items():
        rows.append(
            [
                name,
                *[
                    f"{s[f'{m} median']:.2e} / {s[f'{m} p90']:.2e} / {s[f'{m} stuck']:.0%}"
                    for m in ("constrained", "relaxed")
                ],
                f"{s['released median']:.2e} / {s['released stuck']:.0%} / "
                f"{s['released escaped']:.0%}",
                f"{s['free median']:.2e} / {s['free p90']:.2e} / {s['free stuck']:.0%}",
                f"{s['constrained@T saddle share']:.0%}, {s['hessian min outside (median)']:.2e}, "
                f"{s['grad inside (median)']:.1e} / {s['grad outside (median)']:.1e}",
                ", ".join(f"{k}: {v}" for k, v in s["released nearest"].items()),
                ", ".join(f"{k}: {v}" for k, v in s["relaxed nearest"].items()),
            ]
        )
    header = (
        f"Equivariant landscape: {args.seeds} seeds, {args.steps} + {args.steps} full-batch Adam "
        f"steps (lr {args.lr}), relative test MSE, stuck = above {args.stuck:g}"
    )
    lines = [header, "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n", columns, rows


@dataclass(frozen=True)
class Config:
    """`steps` per phase (T); `stuck`: the relative test MSE threshold."""

    settings: tuple[Literal[tuple(SETTINGS)], ...] = tuple(SETTINGS)
    seeds: int = 10
    steps: int = 4000
    lr: float = 0.01
    stuck: float = 1e-2
    threads: int = 1
    wandb: bool = False


def main(run: Run, args: Config) -> None:
    torch.set_num_threads(args.threads)
    summaries, raw = {}, {}
    for name in args.settings:
        start = time.perf_counter()
        n, teacher_hidden, student_hidden = SETTINGS[name]
        runs = [run_seed(SETTINGS[name], seed, args) for seed in range(args.seeds)]
        raw[name] = runs
        summaries[name] = summarize(runs, args, rep_name(student_hidden), rep_name(teacher_hidden))
        run.log(f"{name} {time.perf_counter() - start:.0f} s {summaries[name]}")
    text, columns, rows = markdown(summaries, args)
    config = asdict(args)
    run.write(
        "equivariant_landscape", {"config": config, "summaries": summaries, "runs": raw}, text
    )
    if args.wandb:
        log_tables("equivariant_landscape", config, {"equivariant_landscape": (columns, rows)})


BENCHMARK = Benchmark(
    "equivariant_landscape",
    main,
    Config,
    smoke=dict(settings=tuple(SETTINGS)[:1], seeds=1, steps=5),
)

if __name__ == "__main__":
    BENCHMARK.main()
