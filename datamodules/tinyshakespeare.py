"""Character-level tinyshakespeare (Karpathy's char-rnn corpus, ~1.1 M characters, 65 symbols).

The text is split contiguously (train, then val, then test), so no validation character was seen
in a training window. Training windows start at random offsets, drawn afresh every epoch by a
seeded `DistributedSampler`; validation and test use fixed, non-overlapping windows.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import lightning as L
import numpy as np
import torch
from torch import Tensor
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from optiforge.datamodules.world import trainer_world
from optiforge.problems.data_paths import data_path

DEFAULT_FILE = "tinyshakespeare/input.txt"


class CharWindows(Dataset):
    """Windows of a token sequence: item i is (ids[s:s+T], ids[s+1:s+T+1]) with s = starts[i].

    Args:
        ids: token ids [n] (int64).
        context_length: T, characters per window.
        stride: distance between consecutive window starts (1 = every offset, T = disjoint).
    """

    def __init__(self, ids: Tensor, context_length: int, stride: int) -> None:
        if len(ids) <= context_length:
            raise ValueError(
                f"data.context_length={context_length} needs more than that many characters per "
                f"split, the split has {len(ids)}"
            )
        self.ids = ids
        self.context_length = context_length
        self.starts = torch.arange(0, len(ids) - context_length, stride)

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, index: int) -> tuple[Tensor, Tensor]:
        start = int(self.starts[index])
        chunk = self.ids[start : start + self.context_length + 1]
        return chunk[:-1], chunk[1:]


class WindowSampler(DistributedSampler):
    """A `DistributedSampler` cut to `num_windows` indices per epoch (over all processes).

    The full permutation depends only on (seed, epoch), and rank r takes its stride of it, so
    k processes with batch b see together what one process with batch k*b sees, and a resumed
    run sees the same windows (Lightning calls `set_epoch`).
    """

    def __init__(
        self, dataset: Dataset, num_windows: int, num_replicas: int, rank: int, seed: int
    ) -> None:
        super().__init__(dataset, num_replicas=num_replicas, rank=rank, shuffle=True, seed=seed)
        self.per_rank = num_windows // num_replicas

    def __iter__(self) -> Iterator[int]:
        indices = list(super().__iter__())
        return iter(indices[: self.per_rank])

    def __len__(self) -> int:
        return self.per_rank


class TinyShakespeareDataModule(L.LightningDataModule):
    """Next-character prediction on a text file: batches of (inputs [B, T], targets [B, T]).

    The vocabulary is the sorted set of characters of the whole file (`vocab`, 65 for
    tinyshakespeare), kept in the checkpoint; targets are the inputs shifted by one character.

    Args:
        path: the text file; None means `tinyshakespeare/input.txt` in the data folder
            (see `optiforge.problems.data_paths.data_dir`).
        context_length: T, characters per window (>= 1).
        batch_size: training windows per batch and process (>= 1).
        eval_batch_size: windows per validation / test batch (>= 1).
        train_windows_per_epoch: random training windows per epoch over all processes
            (>= 1; rounded down to a multiple of the number of processes).
        val_fraction: share of the text, after the training part, for validation, in (0, 1).
        test_fraction: share of the text at its end for testing, in (0, 1).
        seed: seed of the training windows.
        num_workers: DataLoader worker processes (>= 0).
    """

    def __init__(
        self,
        path: str | None = None,
        context_length: int = 64,
        batch_size: int = 32,
        eval_batch_size: int = 128,
        train_windows_per_epoch: int = 3200,
        val_fraction: float = 0.05,
        test_fraction: float = 0.05,
        seed: int = 0,
        num_workers: int = 0,
    ) -> None:
        super().__init__()
        for name, value in (
            ("context_length", context_length),
            ("batch_size", batch_size),
            ("eval_batch_size", eval_batch_size),
            ("train_windows_per_epoch", train_windows_per_epoch),
        ):
            if value < 1:
                raise ValueError(f"data.{name} must be >= 1, got {value}")
        for name, value in (("val_fraction", val_fraction), ("test_fraction", test_fraction)):
            if not 0.0 < value < 1.0:
                raise ValueError(f"data.{name} must be in (0, 1), got {value}")
        if val_fraction + test_fraction >= 1.0:
            raise ValueError(
                "data.val_fraction + data.test_fraction must be < 1, "
                f"got {val_fraction + test_fraction}"
            )
        if num_workers < 0:
            raise ValueError(f"data.num_workers must be >= 0, got {num_workers}")
        path = str(data_path(DEFAULT_FILE)) if path is None else path
        if not Path(path).is_file():
            raise ValueError(f"data.path: no file at {path!r} (expected a text file)")
        self.save_hyperparameters()
        self.path = path
        self.context_length = context_length
        self.batch_size = batch_size
        self.eval_batch_size = eval_batch_size
        self.train_windows_per_epoch = train_windows_per_epoch
        self.val_fraction = val_fraction
        self.test_fraction = test_fraction
        self.seed = seed
        self.num_workers = num_workers
        self.vocab: list[str] = []
        self.splits: dict[str, CharWindows] = {}

    @property
    def vocab_size(self) -> int:
        """Number of distinct characters (known after `setup`)."""
        if not self.vocab:
            raise RuntimeError("TinyShakespeareDataModule.vocab_size is known after setup()")
        return len(self.vocab)

    def encode(self, text: str) -> Tensor:
        """Token ids [len(text)] of `text`; every character must be in the vocabulary."""
        codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        table = np.array([ord(char) for char in self.vocab], dtype=np.uint32)
        ids = np.searchsorted(table, codes)
        known = (ids < len(table)) & (table[np.minimum(ids, len(table) - 1)] == codes)
        if not known.all():
            raise ValueError(f"character {chr(codes[~known][0])!r} is not in the vocabulary")
        return torch.as_tensor(ids, dtype=torch.long)

    def decode(self, ids: Tensor) -> str:
        """The text of token ids [n]."""
        return "".join(self.vocab[i] for i in ids.tolist())

    def setup(self, stage: str | None = None) -> None:
        """Read the file once, build the vocabulary and the three contiguous splits."""
        if self.splits:
            return
        text = Path(self.path).read_text(encoding="utf-8")
        self.vocab = sorted(set(text))
        ids = self.encode(text)
        n_val = int(self.val_fraction * len(ids))
        n_test = int(self.test_fraction * len(ids))
        n_train = len(ids) - n_val - n_test
        parts = {
            "train": ids[:n_train],
            "val": ids[n_train : n_train + n_val],
            "test": ids[n_train + n_val :],
        }
        T = self.context_length
        self.splits = {
            split: CharWindows(part, T, stride=1 if split == "train" else T)
            for split, part in parts.items()
        }
        if self.train_windows_per_epoch > len(self.splits["train"]):
            raise ValueError(
                f"data.train_windows_per_epoch must be <= {len(self.splits['train'])} (the "
                f"training windows of length {T}), got {self.train_windows_per_epoch}"
            )

    def state_dict(self) -> dict[str, str]:
        """The vocabulary, so that a checkpoint records which id is which character."""
        return {"vocab": "".join(self.vocab)}

    def load_state_dict(self, state_dict: dict[str, str]) -> None:
        """Refuse to resume on a text whose vocabulary differs from the checkpoint's."""
        if self.vocab and "".join(self.vocab) != state_dict["vocab"]:
            raise ValueError(
                f"data.path {self.path!r} has a different vocabulary than the checkpoint"
            )

    def train_dataloader(self) -> DataLoader:
        world_size, rank = trainer_world(self)
        sampler = WindowSampler(
            self.splits["train"], self.train_windows_per_epoch, world_size, rank, self.seed
        )
        return DataLoader(
            self.splits["train"],
            batch_size=self.batch_size,
            sampler=sampler,
            num_workers=self.num_workers,
        )

    def _eval_loader(self, split: str) -> DataLoader:
        return DataLoader(
            self.splits[split], batch_size=self.eval_batch_size, num_workers=self.num_workers
        )

    def val_dataloader(self) -> DataLoader:
        return self._eval_loader("val")

    def test_dataloader(self) -> DataLoader:
        return self._eval_loader("test")
