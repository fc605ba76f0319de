"""The shipped trained weights of the Llama char LM: export from a checkpoint, load without
downloads. A file is {"hyper_parameters", "state_dict", "vocab", "epoch", "global_step",
"val_bpc"}: weights only (no optimizer state), the module's architecture and the data's
character vocabulary, so encoding text needs no datamodule.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import torch

from optiforge.lightning_modules.kv_lm.module import LlamaCharLanguageModel

if TYPE_CHECKING:
    from transformers import LlamaForCausalLM

    from optiforge.datamodules.tinyshakespeare import TinyShakespeareDataModule as DataModule

SHIPPED = Path(__file__).resolve().parent / "weights" / "llama_char_tinyshakespeare.pt"
FIELDS = ("hyper_parameters", "state_dict", "vocab", "epoch", "global_step", "val_bpc")


def export_weights(checkpoint: str | Path, destination: str | Path = SHIPPED) -> dict:
    """Write the weights-only file of a Lightning checkpoint of `LlamaCharLanguageModel`."""
    saved = torch.load(checkpoint, map_location="cpu", weights_only=False)
    scores = [
        state["best_model_score"]
        for state in saved["callbacks"].values()
        if isinstance(state, dict) and state.get("best_model_score") is not None
    ]
    vocab = (
        saved["TinyShakespeareDataModule"]["vocab"] if "TinyShakespeareDataModule" in saved else ""
    )
    content = {
        "hyper_parameters": {
            name: value
            for name, value in saved["hyper_parameters"].items()
            if not name.startswith("_")  # LightningCLI's class path record
        },
        "state_dict": saved["state_dict"],
        "vocab": vocab,
        "epoch": saved["epoch"],
        "global_step": saved["global_step"],
        "val_bpc": float(scores[0]) if scores else float("nan"),
    }
    Path(destination).parent.mkdir(parents=True, exist_ok=True)
    torch.save(content, destination)
    return content


def load_weights(path: str | Path = SHIPPED) -> tuple[LlamaCharLanguageModel, dict]:
    """The model (eval mode) and the file's other fields; a file that is not one of ours is a
    ValueError naming the missing fields."""
    if not Path(path).is_file():
        raise ValueError(f"weights: no file at {str(path)!r}")
    content = torch.load(path, map_location="cpu", weights_only=True)
    missing = [name for name in FIELDS if name not in content]
    if missing:
        raise ValueError(f"weights: {str(path)!r} lacks the fields {missing}")
    model = LlamaCharLanguageModel(**content["hyper_parameters"])
    model.load_state_dict(content["state_dict"])
    return model.eval(), {name: content[name] for name in FIELDS if name != "state_dict"}


def llama_and_data(path: str | Path = SHIPPED) -> tuple[LlamaForCausalLM, dict, DataModule]:
    """The weights' `LlamaForCausalLM` (eval mode), the file's other fields, and the set-up
    tinyshakespeare datamodule at the model's context length (what the benchmarks measure on)."""
    from optiforge.datamodules.tinyshakespeare import TinyShakespeareDataModule

    module, card = load_weights(path)
    data = TinyShakespeareDataModule(context_length=module.hparams.context_length)
    data.setup()
    return module.net.llama, card, data
