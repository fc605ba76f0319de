"""BalanceKV against its baselines: single-layer attention error and compression cost.

Relative error ||Attn_approx - Attn||_F / ||Attn||_F of every method at rates 1/2 ... 1/16 on
(a) synthetic clustered keys with a needle and (b) the real queries, keys and values of every
layer of the shipped Llama char LM (lightning_modules/kv_lm, trained on tinyshakespeare): the
first `--context` positions of a validation window are compressed and the last positions'
queries attend to them. Each seed is a fresh synthetic draw / another validation window and a
fresh walk. BalanceKV runs as ours and as the authors' variant (`variant="authors"`). (c)
BalanceKV's time and peak memory per compressed block against the block size.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run kv_compression

writes kv_compression.{json,md} and docs/figures/kv_compression_error.png
(a few minutes on one core); the end-to-end losses are benchmarks/kv_compression_e2e.py.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

from optiforge.algorithms.kv_compression import (
    BalanceKV,
    KeyNorm,
    KVCompressor,
    RecentWindow,
    SnapKV,
    UniformHalving,
    relative_error,
    weighted_attention,
)
from optiforge.algorithms.kv_compression.synthetic import clustered_with_needle
from optiforge.benchmarks.figures import new_figure, save
from optiforge.benchmarks.harness import Benchmark, Run, timeit
from optiforge.datamodules.tinyshakespeare import TinyShakespeareDataModule
from optiforge.lightning_modules.kv_lm.weights import SHIPPED, load_weights

RATES = (1 / 2, 1 / 4, 1 / 8, 1 / 16)
TAIL = 32  # the latest compressed positions, whose kept count the tables report
METHODS: dict[str, Callable[[float, int], KVCompressor]] = {
    "balancekv": lambda rate, block: BalanceKV(rate, block_size=block),
    "balancekv_authors": lambda rate, block: BalanceKV(rate, block_size=block, variant="authors"),
    "uniform": lambda rate, block: UniformHalving(rate),
    "key_norm": lambda rate, block: KeyNorm(rate),
    "streaming_llm": lambda rate, block: RecentWindow(rate, sink_tokens=4),
    "snapkv": lambda rate, block: SnapKV(rate),
}


def errors(
    queries: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    observation: torch.Tensor,
    block: int,
    seed: int,
) -> dict[str, dict[float, float]]:
    """Relative error per method and rate of attention of `queries` over the compressed keys,
    and (key "<method>_tail") how many of the last TAIL positions each kept, per head."""
    exact = weighted_attention(queries, keys, values)
    found: dict[str, dict[float, float]] = {}
    for name, build in METHODS.items():
        found[name], found[f"{name}_tail"] = {}, {}
        for rate in RATES:
            generator = torch.Generator().manual_seed(seed)
            kept = build(rate, block).compress(keys, values, observation, generator)
            approx = weighted_attention(queries, kept.keys, kept.values, kept.log_weights)
            found[name][rate] = relative_error(approx, exact).item()
            tail = (kept.positions >= keys.shape[-2] - TAIL).sum(-1).double().mean().item()
            found[f"{name}_tail"][rate] = tail
    return found


def synthetic(args: Config) -> list[dict]:
    """Per seed, the errors on a fresh clustered-keys-with-needle draw."""
    runs = []
    for seed in range(args.seeds):
        generator = torch.Generator().manual_seed(seed)
        data = clustered_with_needle((1, args.heads), args.tokens, args.dim, generator=generator)
        found = errors(
            data.queries, data.keys, data.values, data.observation_queries, args.block, seed
        )
        runs.append({"seed": seed, "errors": found})
    return runs


def model_layers(args: Config) -> tuple[list[dict], dict]:
    """Per seed (validation window) and layer, the errors on the LM's own q, k, v."""
    model, card = load_weights(args.weights)
    data = TinyShakespeareDataModule(context_length=model.hparams.context_length)
    data.setup()
    windows = data.splits["val"]
    picks = torch.linspace(0, len(windows) - 1, args.seeds).long().tolist()
    ctx, window = args.context, args.observation
    runs, entropy = [], []
    for seed, pick in enumerate(picks):
        ids = windows[pick][0].unsqueeze(0)
        for layer, (q, k, v) in enumerate(model.net.attention_inputs(ids)):
            queries, keys, values = q[..., ctx:, :], k[..., :ctx, :], v[..., :ctx, :]
            logits = queries @ keys.transpose(-1, -2) / math.sqrt(keys.shape[-1])
            probs = torch.softmax(logits, dim=-1)
            entropy.append((-(probs * probs.clamp_min(1e-30).log()).sum(-1)).mean().item())
            found = errors(queries, keys, values, q[..., ctx - window : ctx, :], 128, seed)
            runs.append({"seed": seed, "window": pick, "layer": layer, "errors": found})
    stats = {
        "val_bpc": card["val_bpc"],
        "val_loss_nats": card["val_bpc"] * math.log(2.0),
        "epoch": card["epoch"],
        "global_step": card["global_step"],
        "mean_attention_entropy": statistics.fmean(entropy),
        "log_context": math.log(ctx),
    }
    return runs, stats


def peak_memory(run: Callable[[], object]) -> int:
    """Peak bytes allocated by torch ops during `run` (CPU profiler, self allocations in time
    order)."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        run()
    current = peak = 0
    for event in sorted(prof.events(), key=lambda e: e.time_range.start):
        current += event.self_cpu_memory_usage
        peak = max(peak, current)
    return peak


def cost(args: Config) -> list[dict]:
    """Seconds and peak bytes for one halving of `--cost-tokens` tokens, per block size."""
    generator = torch.Generator().manual_seed(0)
    shape = (1, args.heads, args.cost_tokens, args.dim)
    keys, values = torch.randn(shape, generator=generator), torch.randn(shape, generator=generator)
    rows = []
    for block in args.cost_blocks:
        method = BalanceKV(0.5, block_size=block)

        def run(method: BalanceKV = method) -> object:
            return method.compress(keys, values, generator=torch.Generator().manual_seed(1))

        seconds = timeit(run, warmup=1, repeats=args.repeats).median
        blocks = math.ceil(args.cost_tokens / block)
        rows.append(
            {
                "block_size": block,
                "seconds": seconds,
                "ms_per_block": 1e3 * seconds / blocks,
                "us_per_token": 1e6 * seconds / args.cost_tokens,
                "peak_mib": peak_memory(run) / 2**20,
            }
        )
    return rows


def mean_table(runs: list[dict]) -> dict[str, dict[str, list[float]]]:
    """Per method and rate: the mean and standard deviation over runs, and BalanceKV's wins."""
    table: dict[str, dict[str, list[float]]] = {}
    for name in [*METHODS, *(f"{method}_tail" for method in METHODS)]:
        table[name] = {}
        for rate in RATES:
            values = [run["errors"][name][rate] for run in runs]
            table[name][str(rate)] = [statistics.fmean(values), statistics.pstdev(values)]
    return table


def markdown(title: str, table: dict, runs: list[dict]) -> str:
    """A method x rate table of mean +- std, and BalanceKV's wins over uniform per rate."""
    lines = [
        f"### {title}",
        "",
        "| method | " + " | ".join(f"1/{round(1 / r)}" for r in RATES) + " |",
    ]
    lines.append("|---" * (len(RATES) + 1) + "|")
    for name in METHODS:
        row = [f"{table[name][str(r)][0]:.3f} ± {table[name][str(r)][1]:.3f}" for r in RATES]
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    wins = [
        sum(run["errors"]["balancekv"][r] < run["errors"]["uniform"][r] for run in runs)
        for r in RATES
    ]
    lines.append(f"| BalanceKV < uniform (of {len(runs)}) | " + " | ".join(map(str, wins)) + " |")
    authors = [
        sum(run["errors"]["balancekv_authors"][r] < run["errors"]["balancekv"][r] for run in runs)
        for r in RATES
    ]
    lines.append(
        f"| authors' variant < ours (of {len(runs)}) | " + " | ".join(map(str, authors)) + " |"
    )
    for name in METHODS:
        row = [f"{table[f'{name}_tail'][str(r)][0]:.1f}" for r in RATES]
        lines.append(f"| {name}: kept of the last {TAIL} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def figure(tables: dict[str, dict], path: Path) -> Path:
    """Mean relative error against the rate, one panel per key source."""
    fig = new_figure(len(tables))
    for axis, (title, table) in zip(fig.axes, tables.items(), strict=True):
        for name in METHODS:
            means = [table[name][str(r)][0] for r in RATES]
            axis.plot([1 / r for r in RATES], means, marker="o", label=name)
        axis.set_xscale("log", base=2)
        axis.set_xlabel("compression 1 / rate")
        axis.set_ylabel("relative attention error")
        axis.set_title(title)
        axis.legend()
    return save(fig, path)


@dataclass(frozen=True)
class Config:
    """Synthetic keys (`tokens`, `block` = BalanceKV's block), the trained LM (`context`
    compressed positions, SnapKV `observation` window) and the cost sweep."""

    seeds: int = 10
    tokens: int = 2048
    dim: int = 64
    heads: int = 8
    block: int = 128
    weights: Path = SHIPPED
    context: int = 384
    observation: int = 32
    cost_tokens: int = 4096
    cost_blocks: tuple[int, ...] = (32, 64, 128, 256, 512)
    repeats: int = 5

    def __post_init__(self) -> None:
        if len(set(self.cost_blocks)) < 2:  # the cost's growth is a fitted slope
            raise ValueError(f"--cost-blocks: give at least two sizes, got {self.cost_blocks}")


def main(run: Run, args: Config) -> None:
    torch.manual_seed(0)
    synthetic_runs = synthetic(args)
    model_runs, model_stats = model_layers(args)
    costs = cost(args)
    tables = {
        "synthetic clustered keys + needle": mean_table(synthetic_runs),
        "trained Llama char LM, all layers": mean_table(model_runs),
    }
    slope = statistics.linear_regression(
        [math.log(row["block_size"]) for row in costs],
        [math.log(row["us_per_token"]) for row in costs],
    ).slope
    text = "\n".join(
        [
            "## Relative attention error (mean ± std over runs)",
            "",
            markdown(
                f"Synthetic: {args.tokens} keys, d {args.dim}, {args.heads} heads, "
                f"{args.seeds} seeds",
                tables["synthetic clustered keys + needle"],
                synthetic_runs,
            ),
            markdown(
                f"Trained LM: {len(model_runs)} runs ({args.seeds} validation windows x "
                f"layers), {args.context} compressed positions",
                tables["trained Llama char LM, all layers"],
                model_runs,
            ),
            f"LM: validation loss {model_stats['val_loss_nats']:.3f} nats "
            f"({model_stats['val_bpc']:.3f} bits/char); attention entropy "
            f"{model_stats['mean_attention_entropy']:.2f} vs uniform log n = "
            f"{model_stats['log_context']:.2f}",
            "",
            f"## BalanceKV cost, one halving of {args.cost_tokens} tokens x {args.heads} heads",
            "",
            "| block | ms / block | µs / token | peak MiB |",
            "|---|---|---|---|",
            *[
                f"| {r['block_size']} | {r['ms_per_block']:.3f} | {r['us_per_token']:.2f} | "
                f"{r['peak_mib']:.1f} |"
                for r in costs
            ],
            "",
            f"log-log slope of time per token against block size: {slope:.2f} (1 = linear)",
            "",
        ]
    )
    record = {
        "args": asdict(args),
        "tables": tables,
        "synthetic_runs": synthetic_runs,
        "model_runs": model_runs,
        "model": model_stats,
        "cost": costs,
        "cost_slope": slope,
    }
    run.write("kv_compression", record, text)
    figure(
        {
            "synthetic clustered + needle": tables["synthetic clustered keys + needle"],
            "trained LM layers": tables["trained Llama char LM, all layers"],
        },
        run.figure("kv_compression_error.png"),
    )


BENCHMARK = Benchmark(
    "kv_compression",
    main,
    Config,
    smoke=dict(seeds=1, tokens=256, dim=16, heads=2, context=128, observation=16, cost_tokens=256,
               cost_blocks=(16, 32), repeats=1),
)  # fmt: skip

if __name__ == "__main__":
    BENCHMARK.main()
