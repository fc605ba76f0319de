"""The shipped trained weights of the Llama char LM: export from a checkpoint, load without
downloads. The file is a `WeightsFile` (`optiforge.lightning_modules.weights_file`, the format of
every shipped model) whose metadata adds the data's character vocabulary (`vocab`, so encoding
text needs no datamodule), `epoch`, `global_step` and the best validation bits per character
(`val_bpc`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from optiforge.lightning_modules.kv_lm.module import LlamaCharLanguageModel
from optiforge.lightning_modules.weights_file import (
    read_checkpoint,
    read_weights_file,
    save_weights_file,
)

SHIPPED = Path(__file__).resolve().parent / "weights" / "llama_char_tinyshakespeare.pt"
# SHIPPED fine-tuned to copy from its context (configs/kv/needle_copying.yaml): the needle
# benchmark's model, since SHIPPED retrieves no needle at all.
NEEDLE = SHIPPED.with_name("llama_char_needle.pt")
EXTRA_FIELDS = ("vocab", "epoch", "global_step", "val_bpc")


def export_weights(
    checkpoint: str | Path, destination: str | Path = SHIPPED, **metadata: Any
) -> dict[str, Any]:
    """Write the weights file of a Lightning checkpoint of `LlamaCharLanguageModel`;
    `metadata` gives the training command, commit, data convention and results (the best
    validation bits per character, when the run monitored `val/bpc`, is recorded as `val_bpc`,
    else NaN unless `metadata` gives it). Returns the file's metadata."""
    saved = read_checkpoint(checkpoint)
    scores = [
        state["best_model_score"]
        for state in saved["callbacks"].values()
        if isinstance(state, dict)
        and state.get("best_model_score") is not None
        and state.get("monitor") == "val/bpc"
    ]
    vocab = next(  # the char datamodule's state (TinyShakespeare- or CopyingDataModule)
        (
            state["vocab"]
            for state in saved.values()
            if isinstance(state, dict) and "vocab" in state
        ),
        "",
    )
    init_args = {
        name: value
        for name, value in saved["hyper_parameters"].items()
        if not name.startswith("_")  # LightningCLI's class path record
    }
    recorded = {
        "training_command": "not recorded",
        "commit": "not recorded",
        "data": "not recorded",
        "results": [],
        "vocab": vocab,
        "epoch": saved["epoch"],
        "global_step": saved["global_step"],
        "val_bpc": float(scores[0]) if scores else float("nan"),
    }
    written = save_weights_file(
        destination, LlamaCharLanguageModel, init_args, saved["state_dict"], recorded | metadata
    )
    return written.metadata


def load_weights(path: str | Path = SHIPPED) -> tuple[LlamaCharLanguageModel, dict[str, Any]]:
    """The model (eval mode) and the file's metadata; a file that is not a weights file of this
    model is a one-line ValueError naming the file and what is wrong."""
    weights = read_weights_file(path, "weights", expected=LlamaCharLanguageModel)
    missing = [name for name in EXTRA_FIELDS if name not in weights.metadata]
    if missing:
        raise ValueError(f"weights: {weights.path}: metadata lacks {missing}")
    return weights.build(), weights.metadata


def build_parser() -> argparse.ArgumentParser:
    """The export command's arguments."""
    parser = argparse.ArgumentParser(
        prog="python -m optiforge.lightning_modules.kv_lm.weights",
        description="Write the weights file (optiforge-weights format) of a char LM checkpoint.",
    )
    parser.add_argument("checkpoint", help="a Lightning checkpoint of LlamaCharLanguageModel")
    parser.add_argument("out", help="the weights file to write")
    parser.add_argument("--training-command", default="not recorded", help="what trained it")
    return parser


def main(argv: list[str] | None = None) -> None:
    """`python -m optiforge.lightning_modules.kv_lm.weights CKPT OUT`: export a checkpoint of
    `LlamaCharLanguageModel`; a bad checkpoint ends in one line."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        export_weights(args.checkpoint, args.out, training_command=args.training_command)
    except ValueError as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")


if __name__ == "__main__":
    main()
