"""NeedleRetrieval: greedy answers by hand from fake models, the exact-match share it logs, and
the one-line refusal of a datamodule without needle prompts."""

from __future__ import annotations

import lightning as L
import pytest
import torch
from torch import Tensor
from torch.utils.data import DataLoader, TensorDataset

from optiforge.callbacks import NeedleRetrieval
from optiforge.callbacks.needle_retrieval import greedy_answers
from tests.trainers import quiet_trainer

VOCAB = 10


class NextId(L.LightningModule):
    """Logits that put all mass on (last id + shift) mod VOCAB at every position."""

    def __init__(self, shift: int = 1) -> None:
        super().__init__()
        self.shift = shift
        self.anchor = torch.nn.Parameter(torch.zeros(()))

    def forward(self, ids: Tensor) -> Tensor:
        return torch.nn.functional.one_hot((ids + self.shift) % VOCAB, VOCAB).float()

    def validation_step(self, batch: list[Tensor], batch_idx: int) -> None:
        self.log("val/loss", self.anchor)


class Prompts(L.LightningDataModule):
    """Three prompts ending in 0, 5 and 8; answers: two are what NextId(1) says, one is not."""

    def retrieval_task(self, split: str = "val") -> tuple[Tensor, Tensor]:
        prompts = torch.tensor([[3, 0], [4, 5], [1, 8]])
        answers = torch.tensor([[1, 2, 3], [6, 7, 8], [9, 0, 2]])
        return prompts, answers

    def val_dataloader(self) -> DataLoader:
        return DataLoader(TensorDataset(torch.zeros(2, 1)), batch_size=2)


def test_greedy_answers_by_hand() -> None:
    """Each greedy id is the previous one plus the shift, in batches of any size."""
    prompts = torch.tensor([[3, 0], [4, 5], [1, 8]])
    for batch in (1, 2, 3):
        found = greedy_answers(NextId(1), prompts, 3, batch)
        assert found.tolist() == [[1, 2, 3], [6, 7, 8], [9, 0, 1]]
    assert greedy_answers(NextId(3), prompts, 2, 2).tolist() == [[3, 6], [8, 1], [1, 4]]


def test_logs_the_exact_match_share() -> None:
    """Two of the three answers are NextId(1)'s greedy answers exactly: 2/3 is logged."""
    trainer = quiet_trainer(callbacks=[NeedleRetrieval(batch=2)])
    trainer.validate(NextId(1), datamodule=Prompts(), verbose=False)
    assert trainer.callback_metrics["val/needle_exact_match"].item() == pytest.approx(2 / 3)


def test_refuses_a_datamodule_without_prompts_and_a_bad_batch() -> None:
    """A datamodule lacking retrieval_task, and batch 0, are named in one line each."""

    class Plain(L.LightningDataModule):
        val_dataloader = Prompts.val_dataloader

    trainer = quiet_trainer(callbacks=[NeedleRetrieval()])
    with pytest.raises(ValueError, match="needs a datamodule with retrieval_task"):
        trainer.validate(NextId(1), datamodule=Plain(), verbose=False)
    with pytest.raises(ValueError, match="NeedleRetrieval.batch must be >= 1"):
        NeedleRetrieval(batch=0)
