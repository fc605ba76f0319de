"""Training text that teaches a char LM in-context copying: plain tinyshakespeare windows mixed
with documents whose marked characters only copying can predict (random strings repeated,
key-value lines, needle lines asked again), and a held-out needle-retrieval task for validation.

A small char LM trained on Shakespeare alone does not copy from its context at all (the
needle benchmark measures 0 exact matches), so KV-cache compression cannot be ranked on it.
Repeated strings alone teach the period of a document, not a lookup; the documents of
key-value lines only are what teaches looking a value up by its key; the needle lines carry it
into Shakespeare, and the plain windows keep the language model.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import torch
from torch import Tensor
from torch.utils.data import DataLoader, Dataset

from optiforge.datamodules.tinyshakespeare import TinyShakespeareDataModule, WindowSampler
from optiforge.datamodules.world import trainer_world
from optiforge.problems.needles import (
    key_value_document,
    needle_task,
    repeat_document,
    training_document,
)

RETRIEVAL_LENGTH = 480  # characters of a validation needle prompt, query included


class CopyingDocuments(Dataset):
    """Item i: (inputs [T], targets [T], weights [T]) of a document drawn from a generator
    seeded by (seed, i) alone: a repeated string, key-value lines, a needle document or plain
    text, by shares; a target only copying can predict weighs `copy_weight`, every other one 1.

    Args:
        text: the training text (filler and plain windows).
        encode: text -> ids.
        context_length: T.
        size: number of distinct items (the sampler draws among them every epoch).
        repeat_share: share of repeated-string documents.
        key_value_share: share of documents of key-value lines only.
        needle_share: share of needle documents (the rest is plain text).
        max_pairs: needle lines per needle document, 1..max_pairs.
        copy_weight: loss weight of the copy-only targets.
        warmup_epochs: epochs in which every document is a repeated string.
        seed: seed of the documents.
    """

    def __init__(
        self,
        text: str,
        encode: Callable[[str], Tensor],
        context_length: int,
        size: int,
        repeat_share: float,
        key_value_share: float,
        needle_share: float,
        max_pairs: int,
        copy_weight: float,
        warmup_epochs: int,
        seed: int,
    ) -> None:
        self.text = text
        self.encode = encode
        self.context_length = context_length
        self.size = size
        self.repeat_share = repeat_share
        self.key_value_share = key_value_share
        self.needle_share = needle_share
        self.max_pairs = max_pairs
        self.copy_weight = copy_weight
        self.warmup_epochs = warmup_epochs
        self.seed = seed
        self.epoch = 0

    def __len__(self) -> int:
        return self.size

    def document(self, index: int) -> tuple[str, list[int]]:
        """The text of item `index` (T + 1 characters) and its copy-only positions."""
        rng = random.Random(f"{self.seed}:{index}")
        length = self.context_length + 1
        draw = rng.random()
        if self.epoch < self.warmup_epochs or draw < self.repeat_share:
            return repeat_document(rng, length, longest=min(20, length - 1))
        draw -= self.repeat_share
        if draw < self.key_value_share:
            return key_value_document(rng, length, max(2, self.max_pairs))
        if draw < self.key_value_share + self.needle_share:
            return training_document(self.text, rng, length, rng.randint(1, self.max_pairs))
        start = rng.randrange(len(self.text) - length + 1)
        return self.text[start : start + length], []

    def __getitem__(self, index: int) -> tuple[Tensor, Tensor, Tensor]:
        text, copied = self.document(index)
        ids = self.encode(text)
        weights = torch.ones(len(text))
        weights[copied] = self.copy_weight
        return ids[:-1], ids[1:], weights[1:]


class EpochSampler(WindowSampler):
    """`WindowSampler` that also tells the documents the epoch (Lightning calls `set_epoch`),
    so the warm-up epochs draw only repeated strings."""

    def set_epoch(self, epoch: int) -> None:
        super().set_epoch(epoch)
        self.dataset.epoch = epoch


class CopyingDataModule(TinyShakespeareDataModule):
    """`TinyShakespeareDataModule` whose training batches are (inputs, targets, weights) of
    `CopyingDocuments`; validation and test stay plain windows (`val/bpc` watches the LM), and
    `retrieval_task` gives the needle prompts a `NeedleRetrieval` callback scores.

    Args (beyond `TinyShakespeareDataModule`'s):
        repeat_share: share of repeated-string documents, in [0, 1].
        key_value_share: share of documents of key-value lines only (the lookup at its
            densest), in [0, 1].
        needle_share: share of needle documents, in [0, 1]; the three shares sum to <= 1, the
            rest is plain text.
        max_pairs: most needle lines in a needle document (>= 1).
        copy_weight: loss weight of the targets only copying predicts (> 0).
        warmup_epochs: first epochs in which every document is a repeated string (>= 0).
        retrieval_tasks: validation needle prompts (>= 1), of 480 characters with one needle.
    """

    def __init__(
        self,
        path: str | None = None,
        context_length: int = 256,
        batch_size: int = 16,
        eval_batch_size: int = 64,
        train_windows_per_epoch: int = 1600,
        val_fraction: float = 0.05,
        test_fraction: float = 0.05,
        seed: int = 0,
        num_workers: int = 0,
        repeat_share: float = 0.1,
        key_value_share: float = 0.4,
        needle_share: float = 0.2,
        max_pairs: int = 4,
        copy_weight: float = 3.0,
        warmup_epochs: int = 0,
        retrieval_tasks: int = 32,
    ) -> None:
        super().__init__(
            path,
            context_length,
            batch_size,
            eval_batch_size,
            train_windows_per_epoch,
            val_fraction,
            test_fraction,
            seed,
            num_workers,
        )
        shares = {
            "repeat_share": repeat_share,
            "key_value_share": key_value_share,
            "needle_share": needle_share,
        }
        for name, share in shares.items():
            if not 0.0 <= share <= 1.0:
                raise ValueError(f"data.{name} must be in [0, 1], got {share}")
        if sum(shares.values()) > 1.0:
            raise ValueError(
                "data.repeat_share + data.key_value_share + data.needle_share must be <= 1, "
                f"got {sum(shares.values())}"
            )
        needle_room = 2 * max_pairs * len("\nKEYS: vals.\n")
        if not max_pairs >= 1 or needle_room >= context_length:
            raise ValueError(
                f"data.max_pairs must be >= 1 with room for twice its needle lines in "
                f"data.context_length={context_length}, got {max_pairs}"
            )
        if not copy_weight > 0.0:
            raise ValueError(f"data.copy_weight must be > 0, got {copy_weight}")
        if warmup_epochs < 0:
            raise ValueError(f"data.warmup_epochs must be >= 0, got {warmup_epochs}")
        if retrieval_tasks < 1:
            raise ValueError(f"data.retrieval_tasks must be >= 1, got {retrieval_tasks}")
        self.save_hyperparameters()
        self.documents: CopyingDocuments | None = None

    def setup(self, stage: str | None = None) -> None:
        super().setup(stage)
        if self.documents is None:
            hp = self.hparams
            self.documents = CopyingDocuments(
                self.decode(self.splits["train"].ids),
                self.encode,
                self.context_length,
                len(self.splits["train"]),
                hp.repeat_share,
                hp.key_value_share,
                hp.needle_share,
                hp.max_pairs,
                hp.copy_weight,
                hp.warmup_epochs,
                self.seed,
            )

    def train_dataloader(self) -> DataLoader:
        world_size, rank = trainer_world(self)
        sampler = EpochSampler(
            self.documents, self.train_windows_per_epoch, world_size, rank, self.seed
        )
        return DataLoader(
            self.documents,
            batch_size=self.batch_size,
            sampler=sampler,
            num_workers=self.num_workers,
        )

    def retrieval_task(self, split: str = "val") -> tuple[Tensor, Tensor]:
        """Needle prompts [N, 480] from `split`'s text (seeded, the same every call) and their
        answers [N, 4]: one needle line per prompt, asked for at the end."""
        text = self.decode(self.splits[split].ids)
        rng = random.Random(1)
        tasks = [
            needle_task(text, rng, RETRIEVAL_LENGTH, 1) for _ in range(self.hparams.retrieval_tasks)
        ]
        prompts = torch.stack([self.encode(task.prompt) for task in tasks])
        answers = torch.stack([self.encode(task.answer) for task in tasks])
        return prompts, answers
