"""The registry of benchmarks, what one declares (`Benchmark`) and what its run receives (`Run`)."""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from optiforge.benchmarks.harness.record import ROOT
from optiforge.benchmarks.harness.report import write_result

RESULTS = ROOT / "benchmarks" / "results"
FIGURES = ROOT / "docs" / "figures"
RUNS = ROOT / "runs" / "benchmarks"

# Every benchmark, by the name of its module under benchmarks/ (imported only when asked for).
NAMES: tuple[str, ...] = (
    "covering",
    "diverse",
    "equality_constrained_fairness",
    "equality_constrained_interpolation",
    "equality_constrained_pinn",
    "equivariant_landscape",
    "fsnet",
    "fsnet_device_timing",
    "fsnet_vs_solvers",
    "generalization_diagnostic",
    "gradient_hessian_tradeoff",
    "heavy_tailed_noise",
    "hephaestus",
    "kv_compression",
    "kv_compression_e2e",
    "kv_compression_needle",
    "learning_rules_derivation",
    "learning_rules_optimizer",
    "m_sharpness",
    "mtlkd_candidates",
    "mtlkd_evaluation",
    "mtlkd_ddp_scaling",
    "mtlkd_figures",
    "mtlkd_gpu_recipe",
    "mtlkd_kd_throughput",
    "mtlkd_mvmoe_table",
    "mvmoe_backhaul_references",
    "mvmoe_large_rule",
    "mvmoe_references",
    "mvmoe_signed_reference",
    "neural_es",
    "optimizer_zoo",
    "optimizers",
    "order_statistics",
    "pyvrp_iteration_budget",
    "readme_wall_times",
    "replicable_testing",
    "replicable_testing_samples",
    "scion_lr_sweep",
    "submodular_streaming",
    "teacher_training_vs_rl4co",
    "testbeds",
    "vrp_env_throughput",
    "vrp_inference",
    "vrp_teacher_gaps",
    "zeroth_order_bias",
    "zeroth_order_cost",
    "zeroth_order_finetune",
    "zeroth_order_mse",
)


@dataclass
class Run:
    """Where one run writes and what it records: `out_dir` holds its JSON and markdown,
    `figure_dir` its figures (benchmarks/results and docs/figures only when published)."""

    name: str
    out_dir: Path
    figure_dir: Path
    published: bool
    provenance: dict[str, Any]
    started: float = field(default_factory=time.perf_counter)
    written: list[Path] = field(default_factory=list)

    def write(
        self, stem: str, payload: Mapping, markdown: str | None = None, indent: int | None = 1
    ) -> list[Path]:
        """`<stem>.json` (provenance + payload) and, given markdown, `<stem>.md`."""
        self.provenance["wall_seconds"] = time.perf_counter() - self.started
        paths = write_result(self.out_dir, stem, payload, markdown, self.provenance, indent)
        self.written += paths
        return paths

    def figure(self, filename: str) -> Path:
        """The path a figure named `filename` is saved at (folders created)."""
        self.figure_dir.mkdir(parents=True, exist_ok=True)
        path = self.figure_dir / filename
        self.written.append(path)
        return path

    @staticmethod
    def log(message: str) -> None:
        """Progress for the person watching (stderr; results go to files)."""
        print(message, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Benchmark:
    """One registered benchmark: `run(run, config)` with `config` an instance of the `config`
    dataclass, whose typed fields are the command-line options and whose defaults are the paper
    preset; `smoke` overrides them for a run of seconds. `peers` are optional distributions the
    benchmark compares against (recorded with their versions; the smoke test skips without
    them). Numbers must be > 0, but seeds and the fields named in `nonnegative` may be 0.
    `external` names the path fields of data the user brings (not shipped, e.g. MVMoE's test
    files): the smoke test skips where that data is missing."""

    name: str
    run: Callable[[Run, Any], object]
    config: type
    smoke: Mapping[str, object]
    paper: Mapping[str, object] = field(default_factory=dict)
    peers: Sequence[str] = ()
    nonnegative: Sequence[str] = ()
    external: Sequence[str] = ()

    def preset(self, name: str) -> dict[str, object]:
        """The overrides of preset `name` ("smoke" or "paper")."""
        presets = {"smoke": self.smoke, "paper": self.paper}
        if name not in presets:
            raise ValueError(f"preset must be one of {sorted(presets)}, got {name!r}")
        return dict(presets[name])

    def main(self, argv: Sequence[str] | None = None) -> None:
        """`python -m optiforge.benchmarks.<name> ...`: the same as
        `python -m optiforge.benchmarks run <name> ...`."""
        from optiforge.benchmarks.harness.cli import main

        main(["run", self.name, *(sys.argv[1:] if argv is None else argv)])


def get(name: str) -> Benchmark:
    """The benchmark registered as `name`; a ValueError lists the valid names."""
    if name not in NAMES:
        raise ValueError(f"unknown benchmark {name!r}; registered: {', '.join(sorted(NAMES))}")
    benchmark = importlib.import_module(f"optiforge.benchmarks.{name}").BENCHMARK
    if benchmark.name != name:
        raise ValueError(f"benchmarks/{name}.py registers {benchmark.name!r}, not {name!r}")
    return benchmark
