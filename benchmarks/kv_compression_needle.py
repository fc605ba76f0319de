"""Needle in a haystack on the char LM: exact-match retrieval after a compressed prefill.

Each prompt is `length` characters of tinyshakespeare training text (the text the LM was trained
on) with `pairs` random key-value lines "\\nKEYS: vals.\\n" at random depths (one by default,
the paper's single needle), then the query "\\nKEYS: " for one of them
(`problems.needles`). The haystack is prefilled under
a press (every layer's cache compressed), the query is fed after it against the compressed
cache (kvpress's pipeline convention: the presses do not see the question), and the greedy
4-character answer must equal the value exactly. Before the presses, the model's ability to
retrieve at all: uncompressed exact match, the same on control prompts without the asked needle,
and next-character copying of a random 4-letter word repeated 8 times. The model is the char LM
fine-tuned to copy (`llama_char_needle.pt`, configs/kv/needle_copying.yaml); the LM the other
KV benchmarks use retrieves nothing (docs/kv_compression_needle.md); `--weights` takes any
weights file of the model.

Presses, at compressions 1/2 ... 1/16 of the compressible tokens: BalanceKVPress ours (default:
no sinks, no window), uniform halving without window, and at the authors' budget of 16 sinks +
64 recent tokens kept exactly: BalanceKVPress ours, BalanceKVPress(variant="authors"), uniform
halving, key norm, StreamingLLM (16 sinks + the latest tokens), and kvpress's SnapKV and PyramidKV
(window 64) at the same mean number of kept tokens.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run kv_compression_needle

writes kv_compression_needle.{json,md} and docs/figures/kv_compression_needle.png.
Needs the `kv` extra (kvpress).
"""

from __future__ import annotations

import random
import statistics
import string
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from kvpress import BasePress, PyramidKVPress, SnapKVPress
from transformers import DynamicCache, LlamaForCausalLM

from optiforge.algorithms.kv_compression import KeyNorm, RecentWindow, UniformHalving
from optiforge.algorithms.kv_compression.press import BalanceKVPress, CompressorPress
from optiforge.benchmarks.figures import new_figure, save
from optiforge.benchmarks.harness import Benchmark, Run
from optiforge.benchmarks.kv_lm_data import llama_and_data
from optiforge.datamodules.tinyshakespeare import TinyShakespeareDataModule
from optiforge.lightning_modules.kv_lm.weights import NEEDLE
from optiforge.problems.needles import NeedleTask, needle_task

RATES = (1 / 2, 1 / 4, 1 / 8, 1 / 16)
SINKS, WINDOW = 16, 64  # the authors' press
RANDOMIZED = ("balancekv", "uniform", "balancekv_16_64", "balancekv_authors", "uniform_16_64")


def budget(context: int, rate: float) -> int:
    """Tokens kept by the presses at the authors' budget: sinks + window + the rest * rate."""
    return SINKS + WINDOW + int((context - SINKS - WINDOW) * rate)


def kvpress_ratio(context: int, rate: float) -> float:
    """kvpress's compression_ratio keeping int(context * (1 - ratio)) = budget(context, rate)."""
    return 1.0 - (budget(context, rate) + 0.5) / context


PRESSES: dict[str, Callable[[float, int, int], BasePress]] = {
    "balancekv": lambda rate, seed, n: BalanceKVPress(1 - rate, seed=seed),
    "uniform": lambda rate, seed, n: CompressorPress(UniformHalving(rate), seed=seed),
    "balancekv_16_64": lambda rate, seed, n: BalanceKVPress(
        1 - rate, sink_tokens=SINKS, recent_tokens=WINDOW, seed=seed
    ),
    "balancekv_authors": lambda rate, seed, n: BalanceKVPress(
        1 - rate, variant="authors", seed=seed
    ),
    "uniform_16_64": lambda rate, seed, n: CompressorPress(
        UniformHalving(rate, SINKS, WINDOW), seed=seed
    ),
    "key_norm_16_64": lambda rate, seed, n: CompressorPress(KeyNorm(rate, SINKS, WINDOW)),
    "streaming_llm_16": lambda rate, seed, n: CompressorPress(RecentWindow(rate, SINKS, WINDOW)),
    "snapkv": lambda rate, seed, n: SnapKVPress(kvpress_ratio(n, rate), window_size=WINDOW),
    "pyramidkv": lambda rate, seed, n: PyramidKVPress(kvpress_ratio(n, rate), window_size=WINDOW),
}


@torch.no_grad()
def answer(
    model: LlamaForCausalLM, press: BasePress | None, context: torch.Tensor, query: torch.Tensor
) -> tuple[torch.Tensor, float]:
    """Greedy answers [B, 4] after prefilling `context` [B, n] under `press` and feeding `query`
    [B, q]; and the mean number of cached context tokens over the layers."""
    cache = DynamicCache()
    if press is None:
        model.model(input_ids=context, past_key_values=cache)
    else:
        with press(model):
            model.model(input_ids=context, past_key_values=cache)
    kept = statistics.fmean(cache.get_seq_length(layer) for layer in range(len(cache)))
    # One id per step: PyramidKV leaves layers of different lengths, which a multi-query
    # step's attention mask (sized on the first layer) would not fit.
    steps = [query[:, i : i + 1] for i in range(query.shape[1])]
    found = []
    for step in range(query.shape[1] + 3):
        ids = steps[step] if step < query.shape[1] else found[-1]
        positions = torch.full_like(ids, context.shape[1] + step)
        logits = model(input_ids=ids, past_key_values=cache, position_ids=positions).logits
        if step >= query.shape[1] - 1:
            found.append(logits[:, -1:].argmax(-1))
    return torch.cat(found, dim=1), kept


def accuracy(
    model: LlamaForCausalLM,
    data: TinyShakespeareDataModule,
    tasks: list[NeedleTask],
    press: BasePress | None,
) -> tuple[float, float]:
    """Exact-match share of the greedy answers, and the mean kept context tokens (prompts in
    chunks of 64, which bounds the walk's float64 kernels to about 140 MB a layer)."""
    query = len(tasks[0].prompt) - tasks[0].prompt.rindex("\n")
    hits, kept = [], []
    for start in range(0, len(tasks), 64):
        chunk = tasks[start : start + 64]
        ids = torch.stack([data.encode(task.prompt) for task in chunk])
        answers, chunk_kept = answer(model, press, ids[:, :-query], ids[:, -query:])
        hits += [data.decode(a) == task.answer for a, task in zip(answers, chunk, strict=True)]
        kept.append(chunk_kept)
    return sum(hits) / len(hits), statistics.fmean(kept)


@dataclass(frozen=True)
class Config:
    """`tasks` prompts of `length` characters with `pairs` needles each; `seeds` of the
    randomized presses; `weights` the LM measured."""

    weights: Path = NEEDLE
    tasks: int = 64
    length: int = 480
    pairs: int = 1
    seeds: int = 1


@torch.no_grad()
def copy_check(
    model: LlamaForCausalLM, data: TinyShakespeareDataModule, text: str, count: int
) -> dict[str, float]:
    """Next-character accuracy and mean log-probability (nats) of the last repetition of a
    random 4-letter word repeated 8 times after 200 characters of `text`, over `count` words:
    copying predicts it, Shakespeare does not (uniform guessing: log 1/65 = -4.17)."""
    rng = random.Random(2)
    prompts = []
    for _ in range(count):
        word = "".join(rng.choices(string.ascii_lowercase, k=4)) + " "
        start = rng.randrange(len(text) - 200)
        prompts.append(text[start : start + 200] + word * 8)
    ids = torch.stack([data.encode(prompt) for prompt in prompts])
    logits = model(input_ids=ids[:, :-1]).logits[:, -5:]
    targets = ids[:, -5:]
    log_probs = torch.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1))
    return {
        "next_char_accuracy": (logits.argmax(-1) == targets).float().mean().item(),
        "mean_log_prob": log_probs.mean().item(),
    }


def retrieval_check(
    args: Config, model: LlamaForCausalLM, data: TinyShakespeareDataModule, text: str
) -> dict[str, float]:
    """Uncompressed exact match on needle prompts and on control prompts (asked needle left
    out), and the copy check."""
    found = {}
    for name, control in (("uncompressed", False), ("control", True)):
        rng = random.Random(1)
        tasks = [
            needle_task(text, rng, args.length, args.pairs, control=control)
            for _ in range(args.tasks)
        ]
        found[name] = accuracy(model, data, tasks, None)[0]
    found.update(copy_check(model, data, text, args.tasks))
    print(f"retrieval check: {found}", flush=True)
    return found


def main(run: Run, args: Config) -> None:
    torch.manual_seed(0)
    model, card, data = llama_and_data(args.weights)
    text = data.decode(data.splits["train"].ids)
    check = retrieval_check(args, model, data, text)
    rng = random.Random(0)
    tasks = [needle_task(text, rng, args.length, args.pairs) for _ in range(args.tasks)]
    full, context = accuracy(model, data, tasks, None)
    cells: dict[str, dict[str, list[float]]] = {}
    for name, make in PRESSES.items():
        cells[name] = {}
        for rate in RATES:
            seeds = range(args.seeds) if name in RANDOMIZED else [0]
            runs = [accuracy(model, data, tasks, make(rate, s, int(context))) for s in seeds]
            scores = [score for score, _ in runs]
            cells[name][str(rate)] = [
                statistics.fmean(scores),
                statistics.pstdev(scores),
                statistics.fmean(kept for _, kept in runs),
            ]
            print(f"{name:18s} 1/{round(1 / rate):2d}: {cells[name][str(rate)]}", flush=True)
    header = "| press | " + " | ".join(f"1/{round(1 / r)}" for r in RATES) + " |"
    lines = [
        f"LM {args.weights.name}: {card['global_step']} steps, validation {card['val_bpc']:.3f} "
        "bits/char; "
        f"{args.tasks} prompts of {args.length} characters, {args.pairs} needle line(s) each, "
        f"{int(context)} context tokens before the query",
        "",
        "Retrieval check (uncompressed exact match, control without the needle, copying of a "
        "word repeated 8 times): "
        + ", ".join(f"{name} {value:.3f}" for name, value in check.items())
        + f"; exact match on the prompts below {full:.3f}",
        "",
        "## Exact match (mean ± std over seeds) and kept context tokens (mean over layers)",
        "",
        header,
        "|---" * (len(RATES) + 1) + "|",
    ]
    for name in PRESSES:
        row = [
            f"{cells[name][str(r)][0]:.3f} ± {cells[name][str(r)][1]:.3f} "
            f"({cells[name][str(r)][2]:.0f})"
            for r in RATES
        ]
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    record = {
        "args": asdict(args),
        "model": {k: card[k] for k in ("epoch", "global_step", "val_bpc")},
        "retrieval_check": check,
        "uncompressed": full,
        "context_tokens": context,
        "accuracy": cells,
    }
    run.write("kv_compression_needle", record, "\n".join(lines) + "\n")
    fig = new_figure(1)
    axis = fig.axes[0]
    for name in PRESSES:
        means = [full] + [cells[name][str(r)][0] for r in RATES]
        axis.plot([1] + [1 / r for r in RATES], means, marker="o", label=name)
    axis.set_xscale("log", base=2)
    axis.set_xlabel("compression of the compressible tokens (1 / rate)")
    axis.set_ylabel("exact match")
    axis.set_title("needle retrieval after a compressed prefill")
    axis.legend(fontsize=7)
    save(fig, run.figure("kv_compression_needle.png"))


BENCHMARK = Benchmark(
    "kv_compression_needle",
    main,
    Config,
    smoke=dict(tasks=2, seeds=1),
    peers=("kvpress", "transformers"),
)

if __name__ == "__main__":
    BENCHMARK.main()
