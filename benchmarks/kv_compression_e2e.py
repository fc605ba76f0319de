"""End to end: the shipped Llama char LM with its cache compressed by every press, in kvpress.

(1) Validation loss: each of `--windows` tinyshakespeare validation windows of 512 characters is
prefilled for its first `--context` characters under a press (every layer's cache compressed),
then the next characters are scored with teacher forcing against the compressed cache.
(2) kvpress's own pipeline (`KVPressTextGenerationPipeline`, with a character tokenizer built
here): the context is a validation passage ending at a line break, the "question" its next line,
and the greedy answer is compared character by character with the true continuation.
Presses: BalanceKVPress and uniform halving (ours, `CompressorPress`; also with the authors' 16
exact sinks and 64 recent tokens, which keep more than the others' budget), and kvpress's SnapKV,
StreamingLLM, Knorm, ExpectedAttention and Random, at rates 1/2 ... 1/16.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks run kv_compression_e2e

writes kv_compression_e2e.{json,md} and docs/figures/kv_compression_e2e.png.
Needs the `kv` extra (kvpress).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from kvpress import (
    BasePress,
    ExpectedAttentionPress,
    KnormPress,
    KVPressTextGenerationPipeline,
    RandomPress,
    SnapKVPress,
    StreamingLLMPress,
)
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from torch.nn import functional as F
from torch.utils.data import Dataset
from transformers import DynamicCache, LlamaForCausalLM, PreTrainedTokenizerFast

from optiforge.algorithms.kv_compression import UniformHalving
from optiforge.algorithms.kv_compression.press import BalanceKVPress, CompressorPress
from optiforge.benchmarks.figures import new_figure, save
from optiforge.benchmarks.harness import Benchmark, Run
from optiforge.benchmarks.kv_lm_data import llama_and_data
from optiforge.datamodules.tinyshakespeare import TinyShakespeareDataModule
from optiforge.lightning_modules.kv_lm.weights import SHIPPED

RATES = (1.0, 1 / 2, 1 / 4, 1 / 8, 1 / 16)
RANDOMIZED = ("balancekv", "uniform", "balancekv_16_64", "uniform_16_64", "random")
SINKS, WINDOW = 16, 64  # the authors' press: exact sinks and recent window (a larger budget)
NAMES = (
    "balancekv",
    "uniform",
    "balancekv_16_64",
    "uniform_16_64",
    "snapkv",
    "streaming_llm",
    "knorm",
    "expected_attention",
    "random",
)


def make_press(name: str, rate: float, seed: int) -> BasePress | None:
    """The press `name` keeping `rate` of the cache (None at rate 1: no compression)."""
    if rate == 1.0:
        return None
    ratio = 1.0 - rate
    return {
        "balancekv": lambda: BalanceKVPress(ratio, seed=seed),
        "uniform": lambda: CompressorPress(UniformHalving(rate), seed=seed),
        "balancekv_16_64": lambda: BalanceKVPress(
            ratio, sink_tokens=SINKS, recent_tokens=WINDOW, seed=seed
        ),
        "uniform_16_64": lambda: CompressorPress(UniformHalving(rate, SINKS, WINDOW), seed=seed),
        "snapkv": lambda: SnapKVPress(ratio),
        "streaming_llm": lambda: StreamingLLMPress(ratio),
        "knorm": lambda: KnormPress(ratio),
        "expected_attention": lambda: ExpectedAttentionPress(ratio),
        "random": lambda: RandomPress(ratio, seed=seed),
    }[name]()


@torch.no_grad()
def continuation_loss(
    model: LlamaForCausalLM,
    press: BasePress | None,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    context: int,
) -> float:
    """Mean next-character loss (nats) on positions >= `context` after a compressed prefill."""
    cache = DynamicCache()
    if press is None:
        model.model(input_ids=inputs[:, :context], past_key_values=cache)
    else:
        with press(model):
            model.model(input_ids=inputs[:, :context], past_key_values=cache)
    positions = torch.arange(context, inputs.shape[1]).expand(inputs.shape[0], -1)
    logits = model(input_ids=inputs[:, context:], past_key_values=cache, position_ids=positions)
    return F.cross_entropy(logits.logits.flatten(0, 1), targets[:, context:].flatten()).item()


def char_tokenizer(vocab: list[str]) -> PreTrainedTokenizerFast:
    """One token per character, ids in the datamodule's order; BOS is the newline."""
    tokenizer = Tokenizer(models.WordLevel({c: i for i, c in enumerate(vocab)}, unk_token="\n"))
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tokenizer.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="\n")


def passages(text: str, count: int, context: int, answer: int) -> list[tuple[str, str, str]]:
    """(context, question line, true continuation) at `count` evenly spaced line breaks."""
    found = []
    step = (len(text) - 2 * context) // count
    for start in range(context, len(text) - context, step)[:count]:
        cut = text.index("\n", start) + 1
        line_end = text.index("\n", cut)
        found.append((text[cut - context : cut], text[cut:line_end], text[line_end + 1 :][:answer]))
    return found


def agreement(answer: str, truth: str) -> float:
    """Share of the true continuation's characters that the answer reproduces in place."""
    return sum(a == b for a, b in zip(answer, truth, strict=False)) / len(truth)


def losses(args: Config, model: LlamaForCausalLM, windows: Dataset) -> dict:
    """Per press and rate: [mean, std over the presses' seeds] of the continuation loss."""
    picks = torch.linspace(0, len(windows) - 1, args.windows).long().tolist()
    inputs = torch.stack([windows[i][0] for i in picks])
    targets = torch.stack([windows[i][1] for i in picks])
    found: dict[str, dict[str, list[float]]] = {}
    for name in NAMES:
        found[name] = {}
        for rate in RATES:
            seeds = range(args.seeds) if name in RANDOMIZED else [0]
            values = [
                continuation_loss(model, make_press(name, rate, s), inputs, targets, args.context)
                for s in seeds
            ]
            found[name][str(rate)] = [statistics.fmean(values), statistics.pstdev(values)]
            print(f"loss {name:20s} rate {rate:.4f}: {found[name][str(rate)][0]:.4f}", flush=True)
    return found


def pipeline_agreement(
    args: Config, model: LlamaForCausalLM, data: TinyShakespeareDataModule
) -> dict:
    """Per press and rate: [mean, std over passages] of the greedy answers' agreement."""
    pipe = KVPressTextGenerationPipeline(model=model, tokenizer=char_tokenizer(data.vocab))
    tests = passages(data.decode(data.splits["val"].ids), args.passages, args.context, args.answer)
    found: dict[str, dict[str, list[float]]] = {}
    for name in NAMES:
        found[name] = {}
        for rate in RATES:
            scores = []
            for context, question, truth in tests:
                press = make_press(name, rate, 0)
                answer = pipe(context, question=question, press=press, max_new_tokens=args.answer)
                scores.append(agreement(answer["answer"], truth))
            found[name][str(rate)] = [statistics.fmean(scores), statistics.pstdev(scores)]
            print(f"pipeline {name:20s} rate {rate:.4f}: {found[name][str(rate)][0]:.3f}")
    return found


def table(title: str, cells: dict[str, dict[str, list[float]]]) -> list[str]:
    """A markdown press x rate table of mean ± std."""
    lines = [title, "", "| press | " + " | ".join(f"1/{round(1 / r)}" for r in RATES) + " |"]
    lines.append("|---" * (len(RATES) + 1) + "|")
    for name in NAMES:
        row = [f"{cells[name][str(r)][0]:.4f} ± {cells[name][str(r)][1]:.4f}" for r in RATES]
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    return [*lines, ""]


@dataclass(frozen=True)
class Config:
    """`windows` validation windows for the loss, `seeds` of the random presses, `passages`
    pipeline passages with `answer` generated characters."""

    weights: Path = SHIPPED
    windows: int = 64
    context: int = 384
    seeds: int = 3
    passages: int = 16
    answer: int = 48


def main(run: Run, args: Config) -> None:
    torch.manual_seed(0)
    model, card, data = llama_and_data(args.weights)
    loss = losses(args, model, data.splits["val"])
    generation = pipeline_agreement(args, model, data)
    continuation = model.config.max_position_embeddings - args.context
    lines = [
        f"LM: {card['global_step']} steps, validation loss {card['val_bpc'] * math.log(2):.3f} "
        f"nats ({card['val_bpc']:.3f} bits/char)",
        "",
        *table(
            f"## Validation loss (nats/char, mean ± std over seeds) on the {continuation} "
            f"characters after a compressed {args.context}-character prefill, {args.windows} "
            "windows",
            loss,
        ),
        *table(
            f"## kvpress pipeline: greedy answer agreement with the true next {args.answer} "
            f"characters (mean ± std over {args.passages} passages)",
            generation,
        ),
    ]
    record = {
        "args": asdict(args),
        "model": {k: card[k] for k in ("epoch", "global_step", "val_bpc")},
        "loss": loss,
        "pipeline_agreement": generation,
    }
    run.write("kv_compression_e2e", record, "\n".join(lines))
    fig = new_figure(2)
    panels = (("loss after compressed prefill", loss), ("pipeline agreement", generation))
    for axis, (title, cells) in zip(fig.axes, panels, strict=True):
        for name in NAMES:
            means = [cells[name][str(r)][0] for r in RATES]
            axis.plot([1 / r for r in RATES], means, marker="o", label=name)
        axis.set_xscale("log", base=2)
        axis.set_xlabel("compression 1 / rate")
        axis.set_title(title)
        axis.legend()
    save(fig, run.figure("kv_compression_e2e.png"))


BENCHMARK = Benchmark(
    "kv_compression_e2e",
    main,
    Config,
    smoke=dict(windows=2, seeds=1, passages=2, answer=4),
    peers=("kvpress", "transformers"),
)

if __name__ == "__main__":
    BENCHMARK.main()
