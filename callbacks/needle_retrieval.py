"""Log how often a char LM retrieves a needle's value from its context, at every validation."""

from __future__ import annotations

from collections.abc import Callable

import lightning as L
import torch
from lightning.pytorch.callbacks import Callback
from torch import Tensor
from typing_extensions import override


@torch.no_grad()
def greedy_answers(
    model: Callable[[Tensor], Tensor], prompts: Tensor, count: int, batch: int
) -> Tensor:
    """The `count` greedy next ids [N, count] after each prompt [N, T] (a full forward per
    character, in batches of `batch` prompts): `model(ids)` returns logits [B, T, vocab]."""
    answers = []
    for chunk in prompts.split(batch):
        ids = chunk
        for _ in range(count):
            ids = torch.cat([ids, model(ids)[:, -1:].argmax(-1)], dim=1)
        answers.append(ids[:, -count:])
    return torch.cat(answers)


class NeedleRetrieval(Callback):
    """Logs `val/needle_exact_match`: the share of the datamodule's needle prompts
    (`retrieval_task("val")`: prompts [N, T] and answers [N, k]) whose k greedy characters equal
    the answer exactly, after every validation. Any LightningModule whose forward maps ids to
    logits fits; the datamodule must define `retrieval_task` (e.g. `CopyingDataModule`).

    Args:
        batch: prompts per forward (>= 1).
    """

    def __init__(self, batch: int = 16) -> None:
        if batch < 1:
            raise ValueError(f"NeedleRetrieval.batch must be >= 1, got {batch}")
        self.batch = batch
        self.task: tuple[Tensor, Tensor] | None = None

    @override
    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        if not hasattr(trainer.datamodule, "retrieval_task"):
            raise ValueError(
                "NeedleRetrieval needs a datamodule with retrieval_task() (e.g. "
                f"optiforge.datamodules.CopyingDataModule), got {type(trainer.datamodule).__name__}"
            )

    @override
    def on_validation_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if trainer.sanity_checking:
            return
        if self.task is None:
            self.task = trainer.datamodule.retrieval_task("val")
        prompts, answers = (tensor.to(pl_module.device) for tensor in self.task)
        found = greedy_answers(pl_module, prompts, answers.shape[1], self.batch)
        exact = (found == answers).all(dim=1).float().mean()
        pl_module.log("val/needle_exact_match", exact, sync_dist=True, prog_bar=True)
