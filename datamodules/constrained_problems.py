"""Parametric constrained problems (FSNet, DC3 families) as a LightningDataModule.

Training is label-free (FSNet, DC3 and the penalty network learn from the objective and the
constraints), so the training split is parameters x only, drawn fresh from the family's seeded
stream; no solver runs for it. Validation and test splits carry checked reference solutions
(cvxpy for convex families, SLSQP otherwise; see
`optiforge.problems.constrained.reference_solvers`), cached as .npz under `cache_dir`: batches are
(x, y*, f(y*), reference solve seconds).

References are solved only for the instances that will be evaluated: under a trainer with
`limit_val_batches` / `limit_test_batches`, the first batches' instances (the parameter stream
is the same, so they are the first rows of the full split), cached under their own count.
While references are solved, progress lines go to stderr (`ReferenceProgress`).

Instances whose reference was rejected by the feasibility check are left out of the
evaluation set and counted in `rejected` (the benchmark reports the count); they stay in the
cache, flagged.
"""

from __future__ import annotations

from pathlib import Path

import lightning as L
import numpy as np
import torch
from lightning.pytorch.utilities import rank_zero_warn
from torch.utils.data import DataLoader, TensorDataset

from optiforge.datamodules.reference_progress import ReferenceProgress, evaluated_instances
from optiforge.problems.constrained import (
    DEFAULT_PROBLEM,
    ConstrainedDataset,
    ProblemSpec,
    build_dataset,
)

SPLIT_SEEDS = {"train": 0, "val": 1, "test": 2}


class ConstrainedProblemDataModule(L.LightningDataModule):
    """Args:
    problem: the family (name, sizes, seed); share it with the model (YAML anchor).
    train_size / val_size / test_size: instances per split (>= 1).
    batch_size: training batch size; eval_batch_size: validation/test batch size (the test
        batch time is measured at this size, FSNet's 256/512/1024).
    num_starts: SLSQP starts per nonconvex reference instance (best checked one wins).
    cache_dir: folder of the reference caches (None: solve every time, nothing written).
    """

    def __init__(
        self,
        problem: ProblemSpec = DEFAULT_PROBLEM,
        train_size: int = 4096,
        val_size: int = 256,
        test_size: int = 1024,
        batch_size: int = 256,
        eval_batch_size: int = 1024,
        num_starts: int = 1,
        cache_dir: str | None = "data/constrained",
    ) -> None:
        super().__init__()
        sizes = {
            "train_size": train_size,
            "val_size": val_size,
            "test_size": test_size,
            "batch_size": batch_size,
            "eval_batch_size": eval_batch_size,
            "num_starts": num_starts,
        }
        for field, value in sizes.items():
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{field} must be a positive integer, got {value!r}")
        self.save_hyperparameters()
        self.problem = problem
        self.family = problem.build()
        self.sizes = {"train": train_size, "val": val_size, "test": test_size}
        self.datasets: dict[str, TensorDataset] = {}
        self.rejected: dict[str, int] = {}

    def evaluated_size(self, split: str) -> int:
        """Instances of an evaluation split that the attached trainer (if any) evaluates."""
        trainer = getattr(self, "trainer", None)
        return evaluated_instances(trainer, split, self.sizes[split], self.hparams.eval_batch_size)

    def cache_path(self, split: str) -> Path | None:
        """The .npz cache of an evaluation split, named by everything that changes it."""
        if self.hparams.cache_dir is None:
            return None
        spec = self.problem
        name = (
            f"{spec.name}_n{spec.num_vars}_eq{spec.num_eq}_in{spec.num_ineq}_s{spec.seed}"
            f"_{split}{self.evaluated_size(split)}_p{SPLIT_SEEDS[split]}"
            f"_starts{self.hparams.num_starts}"
        )
        return Path(self.hparams.cache_dir) / f"{name}.npz"

    def reference(self, split: str) -> ConstrainedDataset:
        """The evaluated instances of the split with checked references (from the cache when
        present; otherwise solved with progress lines)."""
        spec = self.problem
        size = self.evaluated_size(split)
        cache = self.cache_path(split)
        solving = cache is None or not cache.exists()
        return build_dataset(
            spec.name,
            size,
            num_vars=spec.num_vars,
            num_eq=spec.num_eq,
            num_ineq=spec.num_ineq,
            family_seed=spec.seed,
            parameter_seed=SPLIT_SEEDS[split],
            num_starts=self.hparams.num_starts,
            cache_path=cache,
            progress=ReferenceProgress(split, size) if solving else None,
        )

    def prepare_data(self) -> None:
        """Solve and cache the evaluation splits once (rank 0)."""
        if self.hparams.cache_dir is not None:
            for split in ("val", "test"):
                self.reference(split)

    def setup(self, stage: str) -> None:
        if "train" not in self.datasets:
            x = self.family.sample_parameters(self.sizes["train"], SPLIT_SEEDS["train"])
            self.datasets["train"] = TensorDataset(x)
        for split in ("val", "test"):
            if split not in self.datasets:
                self.datasets[split] = self.evaluation_set(split)

    def evaluation_set(self, split: str) -> TensorDataset:
        """(x, y*, f*, seconds) of the accepted reference instances of `split`."""
        data = self.reference(split)
        accepted = data.reference.accepted
        self.rejected[split] = int((~accepted).sum())
        if self.rejected[split]:
            rank_zero_warn(
                f"{split}: {self.rejected[split]} of {len(accepted)} reference solutions failed "
                "the feasibility check and are left out of the evaluation set"
            )
        if not accepted.any():
            raise ValueError(f"{split}: no reference solution passed the feasibility check")
        index = torch.from_numpy(np.flatnonzero(accepted))
        reference = data.reference
        return TensorDataset(
            data.parameters[index],
            torch.from_numpy(reference.solutions[accepted]),
            torch.from_numpy(reference.objectives[accepted]),
            torch.from_numpy(reference.solve_times[accepted]),
        )

    def train_dataloader(self) -> DataLoader:
        return DataLoader(self.datasets["train"], batch_size=self.hparams.batch_size, shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return DataLoader(self.datasets["val"], batch_size=self.hparams.eval_batch_size)

    def test_dataloader(self) -> DataLoader:
        return DataLoader(self.datasets["test"], batch_size=self.hparams.eval_batch_size)
