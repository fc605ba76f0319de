"""The two training problems of the Scion learning-rate sweep (char-level LM on Tiny
Shakespeare, CNN on digits): how each builds its net, batches, loss and Scion radii."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from optiforge.datamodules import DigitsDataModule, TinyShakespeareDataModule
from optiforge.lightning_modules import Classifier
from optiforge.lightning_modules.char_lm import CharTransformer
from optiforge.optimizers import scion_param_groups

Batch = tuple[Tensor, Tensor]


@dataclass(frozen=True)
class Task:
    """One training problem: how to build the net, its batches, its loss and its Scion radii.

    `size` is "full" or "quick" (a tiny model and data for the smoke test).
    """

    name: str
    steps: int
    size: str
    scales: dict[str, float]
    norms: dict[str, str]

    def build(self, seed: int) -> nn.Module:
        torch.manual_seed(seed)
        if self.name == "char_lm":
            d_model, layers, context = (64, 2, 64) if self.size == "full" else (16, 1, 16)
            return CharTransformer(65, context, d_model, 4, layers, 0.0)
        widths = (32, 64) if self.size == "full" else (4, 8)
        return Classifier((1, 8, 8), 10, "cnn", widths).net

    def data(self, seed: int) -> TinyShakespeareDataModule | DigitsDataModule:
        if self.name == "char_lm":
            context, batch = (64, 16) if self.size == "full" else (16, 8)
            data = TinyShakespeareDataModule(
                context_length=context,
                batch_size=batch,
                eval_batch_size=256,
                train_windows_per_epoch=self.steps * batch,
                seed=seed,
            )
        else:
            data = DigitsDataModule(batch_size=64, eval_batch_size=512, seed=seed)
        data.setup("fit")
        return data

    def train_batches(self, data: TinyShakespeareDataModule | DigitsDataModule) -> list[Batch]:
        """Exactly `steps` training batches, epoch after epoch of the datamodule's loader."""
        batches: list[Batch] = []
        epoch = 0
        while len(batches) < self.steps:
            loader = data.train_dataloader()
            loader.sampler.set_epoch(epoch)  # type: ignore[attr-defined]
            batches.extend(loader)
            epoch += 1
        return batches[: self.steps]

    def val_batches(self, data: TinyShakespeareDataModule | DigitsDataModule) -> list[Batch]:
        batches = list(data.val_dataloader())
        return batches if self.size == "full" else batches[:1]

    def loss(self, net: nn.Module, batch: Batch) -> Tensor:
        inputs, targets = batch
        logits = net(inputs)
        return F.cross_entropy(logits.flatten(0, -2), targets.flatten())

    def param_groups(self, net: nn.Module) -> list[dict[str, Any]]:
        return scion_param_groups(
            net,
            input_norm=self.norms["input"],
            hidden_norm=self.norms["hidden"],
            output_norm=self.norms["output"],
            input_scale=self.scales["input"],
            hidden_scale=self.scales["hidden"],
            output_scale=self.scales["output"],
            vector_scale=self.scales["vector"],
        )


def make_tasks(quick: bool) -> list[Task]:
    """The two sweep tasks and their Scion radii (chosen in a short probe of Scion at lr 2^-5,
    not tuned per point). Sign's ball has entries <= scale / d_in, so the language model's
    embedding and head radius d_model keeps entries <= 1; larger hidden / head radii made the
    Frank-Wolfe iterates of the transformer blow its logits up. The CNN needs larger radii than
    1 (hidden 2, head 128 = entries <= 2) to fit the digits at all under the constraint."""
    size = "quick" if quick else "full"
    lm_width = 16 if quick else 64
    return [
        Task(
            "char_lm",
            steps=10 if quick else 300,
            size=size,
            scales={"input": lm_width, "hidden": 1.0, "output": lm_width, "vector": 1.0},
            norms={"input": "Sign", "hidden": "Spectral", "output": "Sign"},
        ),
        Task(
            "digits",
            steps=10 if quick else 400,
            size=size,
            scales={"input": 2.0, "hidden": 2.0, "output": 128.0, "vector": 1.0},
            norms={"input": "Spectral", "hidden": "Spectral", "output": "Sign"},
        ),
    ]
