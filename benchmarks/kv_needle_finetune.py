"""Fine-tune the shipped char LM towards copying a needle's value from its context (the shipped
LM cannot; docs/kv_compression_needle.md: five runs of up to 550 steps here did not get there).

Each step trains next-character prediction on `batch` documents of `length` characters:
tinyshakespeare training text with `pairs` random key-value lines inserted and every pair
repeated at the end (`needles.training_document`), so the repeated values can only be predicted
by copying. Every `eval_every` steps: greedy exact-match accuracy on needle prompts built from
the validation text, and the validation loss on plain windows. Writes a weights file that
`weights.load_weights` reads and the needle benchmark takes as `--weights`.

    OMP_NUM_THREADS=1 python -m optiforge.benchmarks.kv_needle_finetune --steps 3000
"""

from __future__ import annotations

import argparse
import math
import random
from pathlib import Path

import torch
from torch.nn import functional as F
from transformers import LlamaForCausalLM

from optiforge.datamodules.tinyshakespeare import TinyShakespeareDataModule
from optiforge.lightning_modules.kv_lm.module import LlamaCharLanguageModel
from optiforge.lightning_modules.kv_lm.needles import needle_task, training_document
from optiforge.lightning_modules.kv_lm.weights import SHIPPED, load_weights
from optiforge.lightning_modules.weights_file import save_weights_file

NEEDLE_WEIGHTS = Path("checkpoints") / "kv_lm" / "llama_char_needle.pt"


@torch.no_grad()
def greedy(model: LlamaForCausalLM, ids: torch.Tensor, count: int) -> torch.Tensor:
    """`count` greedy next ids after ids [B, T] (full forward per step, no cache)."""
    for _ in range(count):
        ids = torch.cat([ids, model(input_ids=ids).logits[:, -1:].argmax(-1)], dim=1)
    return ids[:, -count:]


def needle_accuracy(
    model: LlamaForCausalLM,
    data: TinyShakespeareDataModule,
    text: str,
    tasks: int,
    pairs: int,
) -> float:
    """Exact-match share of greedy answers on `tasks` needle prompts of 480 characters."""
    rng = random.Random(1)
    found = [needle_task(text, rng, 480, pairs) for _ in range(tasks)]
    prompts = torch.stack([data.encode(task.prompt) for task in found])
    answers = greedy(model, prompts, len(found[0].answer))
    return sum(data.decode(a) == t.answer for a, t in zip(answers, found, strict=True)) / tasks


@torch.no_grad()
def validation_loss(model: LlamaForCausalLM, data: TinyShakespeareDataModule, count: int) -> float:
    """Mean next-character loss (nats) on `count` evenly spaced validation windows."""
    windows = data.splits["val"]
    picks = torch.linspace(0, len(windows) - 1, count).long().tolist()
    inputs = torch.stack([windows[i][0] for i in picks])
    targets = torch.stack([windows[i][1] for i in picks])
    logits = model(input_ids=inputs).logits
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten()).item()


def save(
    args: argparse.Namespace,
    module: LlamaCharLanguageModel,
    card: dict,
    steps: int,
    val_loss: float,
) -> None:
    """The weights file of `weights.load_weights` after `steps` fine-tuning steps (written at
    every evaluation too, so an interrupted run leaves its latest weights)."""
    metadata = card | {
        "global_step": card["global_step"] + steps,
        "val_bpc": val_loss / math.log(2.0),
        "needle_finetune": {k: v for k, v in vars(args).items() if k != "out"} | {"done": steps},
    }
    init_args = {k: v for k, v in module.hparams.items() if not k.startswith("_")}
    save_weights_file(args.out, LlamaCharLanguageModel, init_args, module.state_dict(), metadata)


def make_parser() -> argparse.ArgumentParser:
    """The command line (the docs' commands are parsed with it in the tests)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=12)
    parser.add_argument("--length", type=int, default=160)
    parser.add_argument("--pairs", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--eval-every", type=int, default=50)
    parser.add_argument("--eval-tasks", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=NEEDLE_WEIGHTS)
    return parser


def main(argv: list[str] | None = None) -> dict:
    parser = make_parser()
    args = parser.parse_args(argv)
    for name in ("steps", "batch", "length", "pairs", "repeats", "eval_every", "eval_tasks"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    torch.manual_seed(args.seed)
    module, card = load_weights(SHIPPED)
    model = module.net.llama.train()
    data = TinyShakespeareDataModule(context_length=module.hparams.context_length)
    data.setup()
    train_text = data.decode(data.splits["train"].ids)
    val_text = data.decode(data.splits["val"].ids)
    rng = random.Random(args.seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    history = []
    for step in range(1, args.steps + 1):
        docs = [
            training_document(train_text, rng, args.length + 1, args.pairs, args.repeats)
            for _ in range(args.batch)
        ]
        ids = torch.stack([data.encode(doc) for doc in docs])
        logits = model(input_ids=ids[:, :-1]).logits
        loss = F.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % args.eval_every == 0 or step == args.steps:
            model.eval()
            row = {
                "step": step,
                "train_loss": loss.item(),
                "needle_accuracy": needle_accuracy(
                    model, data, val_text, args.eval_tasks, args.pairs
                ),
                "val_loss": validation_loss(model, data, 32),
            }
            model.train()
            history.append(row)
            print(row, flush=True)
            save(args, module, card, step, row["val_loss"])
    model.eval()
    val_loss = validation_loss(model, data, 64)
    save(args, module, card, args.steps, val_loss)
    return {"history": history, "val_loss": val_loss}


if __name__ == "__main__":
    main()
