"""Hephaestus phase by phase (Forge, +Morph, +Refine) against greedy, random and the LP.

For each edge function and training seed: train Forge on synthetic instances, Morph on
Forge's solutions, Refine on Morph (each from the previous phase's weights, as the configs
chain them), then test every phase on the same held-out instances (and, with `--gnutella`, on
the real Gnutella08 instance). Every reported solution passes the exact checker; budgets are
compared per instance with pruned greedy path-stressing (`ratio_greedy`) and, on linear
instances, with the exact LP optimum (`ratio_lp`).

`--sweep erdos_renyi:50 barabasi_albert:200 ...` also tests the trained phases on other graph
models and sizes (expected out-degree kept at 5: p = 5 / n; BA attachment 3), `--sweep-size`
instances each: how far the 100-node training carries.

Targets: 100 % feasible; linear: budget within 5 % of the LP optimum (ratio_lp
<= 1.05); nonlinear: >= 10 % lower than greedy on average (ratio_greedy <= 0.90).

    python -m optiforge.benchmarks run hephaestus --functions linear log --seeds 3
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import lightning as L
import numpy as np
import torch

from optiforge.benchmarks.harness import Benchmark, Run
from optiforge.benchmarks.quiet_trainer import quiet_trainer
from optiforge.benchmarks.wandb_tables import log_tables
from optiforge.datamodules.qosd import QoSDDataModule
from optiforge.lightning_modules.hephaestus import Forge
from optiforge.lightning_modules.hephaestus.morph import Morph
from optiforge.lightning_modules.hephaestus.refine import Refine
from optiforge.problems.qosd import EDGE_FUNCTIONS, GRAPH_MODELS

PHASES = ("forge", "morph", "refine")
TARGET_RATIO_LP, TARGET_RATIO_GREEDY = 1.05, 0.90


def test(model: L.LightningModule, data: QoSDDataModule, root: Path) -> dict[str, float]:
    (metrics,) = quiet_trainer(1, root).test(model, datamodule=data, verbose=False)
    return {key.removeprefix("test/"): float(value) for key, value in metrics.items()}


def run_seed(function: str, seed: int, args: Config, root: Path) -> dict:
    """Train the three phases with `seed`; test each on synthetic (and Gnutella08) data."""
    data = QoSDDataModule(
        num_nodes=args.num_nodes,
        edge_probability=args.edge_probability,
        edge_function=function,
        train_size=args.train_size,
        val_size=1,
        test_size=args.test_size,
        batch_size=args.batch_size,
        seed=0,
    )
    extra_sets = extra_test_sets(function, args)
    sizes = {"forge_hidden": args.hidden, "forge_layers": args.layers}
    results: dict[str, dict] = {}
    L.seed_everything(seed, verbose=False)
    forge = Forge(hidden=args.hidden, num_layers=args.layers, lr=args.lr)
    start = time.perf_counter()
    quiet_trainer(args.forge_epochs, root).fit(forge, datamodule=data)
    train_seconds = {"forge": time.perf_counter() - start}
    forge_path = root / f"forge_{function}_{seed}.pt"
    torch.save(forge.state_dict(), forge_path)
    morph = Morph(str(forge_path), **sizes, num_test_samples=args.samples, lr=args.lr)
    start = time.perf_counter()
    quiet_trainer(args.morph_epochs, root).fit(morph, datamodule=data)
    train_seconds["morph"] = time.perf_counter() - start
    morph_path = root / f"morph_{function}_{seed}.pt"
    torch.save(morph.state_dict(), morph_path)
    refine = Refine(str(morph_path), **sizes, search_particles=args.samples, lr=args.lr)
    start = time.perf_counter()
    quiet_trainer(args.refine_epochs, root).fit(refine, datamodule=data)
    train_seconds["refine"] = time.perf_counter() - start
    for name, model in (("forge", forge), ("morph", morph), ("refine", refine)):
        results[name] = test(model, data, root) | {"train_seconds": train_seconds[name]}
        for set_name, extra in extra_sets.items():
            results[f"{name}_{set_name}"] = test(model, extra, root)
        Run.log(f"{function} {seed} {name} {results[name]}")
    return results


def sweep_spec(text: str) -> tuple[str, int]:
    """'<graph model>:<nodes>' -> (model, nodes), refused with the allowed models named."""
    model, _, nodes = text.partition(":")
    if model not in GRAPH_MODELS or not nodes.isdigit() or int(nodes) < 10:
        raise ValueError(
            f"sweep entries are <graph model>:<nodes >= 10> with graph model in {GRAPH_MODELS}, "
            f"got {text!r}"
        )
    return model, int(nodes)


def extra_test_sets(function: str, args: Config) -> dict[str, QoSDDataModule]:
    """Gnutella08 (with --gnutella) and the --sweep graphs, by the name used in the tables."""
    sets = {}
    if args.gnutella:
        sets["gnutella08"] = QoSDDataModule(
            edge_function=function, test_on_gnutella=True, batch_size=1
        )
    for model, nodes in map(sweep_spec, args.sweep):
        sets[f"{model}_{nodes}"] = QoSDDataModule(
            graph_model=model,
            num_nodes=nodes,
            edge_probability=min(1.0, 5 / nodes),
            edge_function=function,
            train_size=1,
            val_size=1,
            test_size=args.sweep_size,
            batch_size=min(args.batch_size, args.sweep_size),
            seed=1,
        )
    return sets


def summarize(runs: list[dict]) -> dict[str, dict[str, float]]:
    """Per phase: means over seeds of every metric (feasible: the minimum over seeds)."""
    out = {}
    for phase in runs[0]:
        keys = runs[0][phase].keys()
        out[phase] = {
            key: float(
                np.min([r[phase][key] for r in runs])
                if key == "feasible"
                else np.mean([r[phase][key] for r in runs])
            )
            for key in keys
        }
    return out


def markdown(results: dict[str, dict], args: Config) -> tuple[str, list, list]:
    columns = [
        "edge function",
        "test set",
        "method",
        "budget",
        "ratio to LP",
        "ratio to greedy",
        "ratio to tuned greedy",
        "feasible",
        "s / instance",
    ]
    rows = []
    for function, entry in results.items():
        summary = entry["summary"]
        for phase in summary:
            s = summary[phase]
            method, _, test_set = phase.partition("_")
            test_set = test_set or "synthetic"
            ratio_lp = f"{s['budget_ratio_lp']:.3f}" if "budget_ratio_lp" in s else "-"
            ratio_tuned = f"{s['budget_ratio_greedy_tuned']:.3f}"
            rows.append(
                [
                    function,
                    test_set,
                    method,
                    f"{s['budget']:.3f}",
                    ratio_lp,
                    f"{s['budget_ratio_greedy']:.3f}",
                    ratio_tuned,
                    f"{s['feasible']:.3f}",
                    f"{s['seconds']:.3f}",
                ]
            )
        for key in [phase for phase in summary if phase.partition("_")[0] == "forge"]:
            test_set = key.partition("_")[2] or "synthetic"
            s = summary[key]
            rows.append([function, test_set, "greedy (pruned)", f"{s['budget_greedy']:.3f}"])
            rows[-1] += ["-", "1.000", "-", "1.000", f"{s['greedy_seconds']:.3f}"]
            rows.append([function, test_set, "tuned greedy", f"{s['budget_greedy_tuned']:.3f}"])
            rows[-1] += ["-", "-", "1.000", "1.000", "-"]
            budget = s["budget_greedy_descent"]
            rows.append([function, test_set, "tuned greedy + descent", f"{budget:.3f}"])
            ratio_lp = f"{s['greedy_descent_ratio_lp']:.3f}" if "budget_lp" in s else "-"
            rows[-1] += [ratio_lp, "-", "-", "1.000", f"{s['greedy_descent_seconds']:.3f}"]
            rows.append([function, test_set, "random", f"{s['budget_random']:.3f}", "-", "-"])
            rows[-1] += ["-", "1.000", "-"]
            if "budget_lp" in s:
                rows.append([function, test_set, "LP optimum", f"{s['budget_lp']:.3f}", "1.000"])
                rows[-1] += ["-", "-", "1.000", f"{s['lp_seconds']:.3f}"]
    header = (
        f"Hephaestus benchmark: {args.seeds} training seeds; Erdos-Renyi n = {args.num_nodes}, "
        f"p = {args.edge_probability}, {args.train_size} training / {args.test_size} test "
        f"instances; epochs Forge {args.forge_epochs}, Morph {args.morph_epochs}, Refine "
        f"{args.refine_epochs}; budgets and ratios are means over test instances and seeds"
    )
    lines = [header, "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += ["", "Targets (refine, synthetic):"]
    lines += [f"- {function}: {entry['targets']}" for function, entry in results.items()]
    return "\n".join(lines) + "\n", columns, rows


def targets(function: str, summary: dict[str, dict[str, float]]) -> dict[str, bool]:
    refine = summary["refine"]
    out = {"100 % feasible": all(s["feasible"] == 1.0 for s in summary.values())}
    if function == "linear":
        out["ratio to LP <= 1.05"] = refine["budget_ratio_lp"] <= TARGET_RATIO_LP
    else:
        out["ratio to greedy <= 0.90"] = refine["budget_ratio_greedy"] <= TARGET_RATIO_GREEDY
        tuned = refine["budget_ratio_greedy_tuned"] <= TARGET_RATIO_GREEDY
        out["ratio to tuned greedy <= 0.90"] = tuned
    return out


@dataclass(frozen=True)
class Config:
    """`samples`: Morph samples and Refine particles; `gnutella`: also test on Gnutella08;
    `sweep`: extra test graphs as <graph model>:<nodes>, `sweep_size` instances each;
    `output`: the stem of the result files."""

    functions: tuple[Literal[tuple(EDGE_FUNCTIONS)], ...] = tuple(EDGE_FUNCTIONS)
    seeds: int = 3
    num_nodes: int = 100
    edge_probability: float = 0.05
    train_size: int = 256
    test_size: int = 32
    batch_size: int = 16
    hidden: int = 64
    layers: int = 3
    lr: float = 1e-3
    forge_epochs: int = 30
    morph_epochs: int = 20
    refine_epochs: int = 10
    samples: int = 16
    gnutella: bool = False
    sweep: tuple[str, ...] = ()
    sweep_size: int = 8
    threads: int = 1
    output: str = "hephaestus"
    wandb: bool = False

    def __post_init__(self) -> None:
        if self.sweep_size < 1:
            raise ValueError(f"sweep_size must be a positive integer, got {self.sweep_size}")
        for entry in self.sweep:
            sweep_spec(entry)


def main(run: Run, args: Config) -> None:
    torch.set_num_threads(args.threads)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for function in args.functions:
            runs = [run_seed(function, seed, args, Path(tmp)) for seed in range(args.seeds)]
            summary = summarize(runs)
            results[function] = {
                "summary": summary,
                "targets": targets(function, summary),
                "runs": runs,
            }
    text, columns, rows = markdown(results, args)
    config = asdict(args)
    run.write(args.output, {"config": config, "results": results}, text)
    if args.wandb:
        log_tables(args.output, config, {args.output: (columns, rows)})


BENCHMARK = Benchmark(
    "hephaestus",
    main,
    Config,
    smoke=dict(functions=("linear",), seeds=1, num_nodes=30, edge_probability=0.15, train_size=8,
               test_size=2, batch_size=4, forge_epochs=1, morph_epochs=1, refine_epochs=1,
               samples=2, sweep=("barabasi_albert:20",), sweep_size=2),
)  # fmt: skip

if __name__ == "__main__":
    BENCHMARK.main()
