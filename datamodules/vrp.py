"""VRP data: fresh random training instances every epoch, fixed cached val/test sets, CVRPLIB.

Training batches come from `optiforge.problems.vrp.generator.generate`, seeded by (seed, epoch,
rank, step), so every epoch sees new instances, every DDP rank different ones, and a rerun (or a
resume at an epoch boundary) the same ones. Validation and test sets are generated once per
(variant, size) with a fixed seed and saved to `cache_dir` as npz together with PyVRP reference
solutions and costs (`optiforge.problems.vrp.pyvrp_solver`, validated) and the iteration budget that
made them (in the file name and the file); later runs load the files. References stop on iterations,
not on time, so a cached set and every gap reported against it are the same on any machine. CVRPLIB
instances (`"CVRP/X-n101-k25"`, `"VRPTW/C1_10_1"`, ...) can be added to the test set. With
`mvmoe_dir`, the val/test sets are MVMoE's published test files instead
(`optiforge.problems.vrp.mvmoe_files`): the test set is a file's first `test_instances` instances,
the val set the `val_instances` after them (disjoint), with the validated solver costs beside the
file as references; nothing is generated or cached for them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import lightning as L
import numpy as np
import torch
from lightning.pytorch.trainer.states import TrainerFn
from torch.utils.data import DataLoader, IterableDataset

from optiforge.datamodules.reference_progress import ReferenceProgress, evaluated_instances
from optiforge.problems.vrp import cvrplib
from optiforge.problems.vrp.arrays import batch_arrays, batch_from_arrays
from optiforge.problems.vrp.eval_batch import VRPEvalBatch
from optiforge.problems.vrp.generator import CONVENTIONS, Convention, generate
from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.mvmoe_files import instance_path, load_mvmoe_set
from optiforge.problems.vrp.pyvrp_solver import PyVRPSolver
from optiforge.problems.vrp.variants import ALL_VARIANTS, variant

SPLITS = ("val", "test")


def derived_seed(*keys: int) -> int:
    """A 63-bit seed that depends on every key (no collisions between nearby tuples)."""
    return int(np.random.SeedSequence(list(keys)).generate_state(2, np.uint64)[0] >> np.uint64(1))


def _cvrplib_set(entry: str, data_dir: str | None) -> VRPEvalBatch:
    """The CVRPLIB test instance `entry` ("CVRP/X-n101-k25") with its BKS, read when the
    datamodule is built so that a missing or malformed file stops a run before it writes."""
    benchmark, _, name = entry.partition("/")
    if benchmark not in cvrplib.BENCHMARKS or not name:
        raise ValueError(
            f"cvrplib_instances: {entry!r} must be '<benchmark>/<name>' with benchmark in "
            f"{list(cvrplib.BENCHMARKS)}"
        )
    try:
        instance = cvrplib.load_instance(benchmark, name, data_dir)
        batch = cvrplib.to_batch(instance)
    except Exception as error:  # vrplib raises many types on a malformed file; one line here
        raise ValueError(f"cvrplib_instances: {entry!r} cannot be read: {error}") from error
    scale = torch.tensor([instance.scale], dtype=torch.float64)
    cost = torch.tensor([instance.bks_cost], dtype=torch.float64) / scale
    return VRPEvalBatch(batch, cost, scale, entry)


class GeneratedBatches(IterableDataset):
    """`num_batches` generated training batches per pass; `epoch()` and `rank` pick the seed."""

    def __init__(
        self,
        variants: str | list[str],
        num_customers: int,
        batch_size: int,
        num_batches: int,
        seed: int,
        rank: int,
        epoch: Callable[[], int],
        mixed_backhaul: bool,
        convention: Convention = "routefinder",
    ) -> None:
        self.variants = variants
        self.num_customers = num_customers
        self.batch_size = batch_size
        self.num_batches = num_batches
        self.seed = seed
        self.rank = rank
        self.epoch = epoch
        self.mixed_backhaul = mixed_backhaul
        self.convention = convention

    def __len__(self) -> int:
        return self.num_batches

    def __iter__(self) -> Iterator[VRPBatch]:
        epoch = self.epoch()
        for step in range(self.num_batches):
            yield generate(
                self.variants,
                self.num_customers,
                self.batch_size,
                seed=derived_seed(self.seed, epoch, self.rank, step),
                mixed_backhaul=self.mixed_backhaul,
                convention=self.convention,
            )


class EvalChunks(IterableDataset):
    """One `VRPEvalBatch` per chunk of `batch_size` rows of a fixed evaluation set."""

    def __init__(self, sets: list[VRPEvalBatch], batch_size: int) -> None:
        self.sets = sets
        self.batch_size = batch_size

    def __iter__(self) -> Iterator[VRPEvalBatch]:
        for item in self.sets:
            for start in range(0, item.instances.batch_size, self.batch_size):
                yield item.index(slice(start, start + self.batch_size))


class VRPDataModule(L.LightningDataModule):
    """Random VRP instances for training, fixed seeded val/test sets, optional CVRPLIB tests.

    Args:
        train_variants: a variant name, a list of names (mixed round-robin within each batch)
            or "mixed" (each of O, B, L, TW on with probability 0.5 per instance).
        num_customers: training instance size n.
        batch_size: training instances per batch.
        batches_per_epoch: training batches per epoch (per rank).
        eval_variants: variants of the val/test sets; None = the training variants (all 16
            when training on "mixed").
        eval_sizes: customer counts of the val/test sets; None = [num_customers].
        val_instances: instances per val set (variant, size).
        test_instances: instances per test set (variant, size).
        eval_batch_size: instances per evaluation batch.
        cache_dir: where the val/test npz files are written once and read afterwards.
        reference_iterations: PyVRP iterations per instance for the reference costs (>= 1;
            250 ~ the quality of the former 0.1 s at n = 50); None = no reference (costs NaN).
        reference_workers: PyVRP worker processes while building the references.
        cvrplib_instances: extra test instances, "<benchmark>/<name>" with benchmark in
            CVRP, VRPB, VRPTW; None = none.
        cvrplib_dir: folder holding the CVRP/VRPB/VRPTW benchmark folders; None = the shared
            `vrplib/` folder.
        mixed_backhaul: backhauls may interleave with linehauls (default strict); RouteFinder
            convention only.
        convention: how instances are generated, for training and the val/test sets:
            "routefinder" (RouteFinder / RL4CO) or "mvmoe" (MVMoE, the instances of MTL-KD's
            paper; backhauls under the signed load rule), see `optiforge.problems.vrp.generator`.
        mvmoe_dir: folder of MVMoE's test files (`<dir>/<VARIANT>/<variant><n>_uniform.pkl`);
            when set, the val/test sets of every (variant, size) are read from it (module
            docstring), and a missing file stops the run when the datamodule is built. None =
            generated sets.
        seed: base seed of every generated instance.
    """

    def __init__(
        self,
        train_variants: str | list[str] = "CVRP",
        num_customers: int = 20,
        batch_size: int = 64,
        batches_per_epoch: int = 10,
        eval_variants: list[str] | None = None,
        eval_sizes: list[int] | None = None,
        val_instances: int = 16,
        test_instances: int = 16,
        eval_batch_size: int = 64,
        cache_dir: str = "data/vrp",
        reference_iterations: int | None = 250,
        reference_workers: int = 1,
        cvrplib_instances: list[str] | None = None,
        cvrplib_dir: str | None = None,
        mixed_backhaul: bool = False,
        convention: Convention = "routefinder",
        mvmoe_dir: str | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__()
        if convention not in CONVENTIONS:
            raise ValueError(f"convention must be one of {list(CONVENTIONS)}, got {convention!r}")
        if convention == "mvmoe" and mixed_backhaul:
            raise ValueError("mixed_backhaul must be False with convention 'mvmoe'")
        if train_variants == "mixed":
            names = list(ALL_VARIANTS)
        else:
            names = [train_variants] if isinstance(train_variants, str) else list(train_variants)
        if not names:
            raise ValueError("train_variants must not be empty")
        for name in [*names, *(eval_variants or [])]:
            variant(name)
        positive = {
            "num_customers": num_customers,
            "batch_size": batch_size,
            "batches_per_epoch": batches_per_epoch,
            "val_instances": val_instances,
            "test_instances": test_instances,
            "eval_batch_size": eval_batch_size,
            "reference_workers": reference_workers,
            "eval_sizes": min(eval_sizes or [1]),
        }
        for field, value in positive.items():
            if value < 1:
                raise ValueError(f"{field} must be >= 1, got {value}")
        if reference_iterations is not None and not (
            isinstance(reference_iterations, int) and reference_iterations >= 1
        ):
            raise ValueError(
                "reference_iterations must be an integer >= 1 or None, "
                f"got {reference_iterations!r}"
            )
        cvrplib_sets = [_cvrplib_set(entry, cvrplib_dir) for entry in cvrplib_instances or []]
        eval_names = names if eval_variants is None else list(eval_variants)
        for name in eval_names if mvmoe_dir is not None else []:
            for size in eval_sizes or [num_customers]:
                instance_path(mvmoe_dir, name, size)  # one line naming mvmoe_dir and the path
        self.save_hyperparameters()
        self.train_variants = train_variants
        self.num_customers = num_customers
        self.batch_size = batch_size
        self.batches_per_epoch = batches_per_epoch
        self.eval_variants = eval_names
        self.eval_sizes = list(eval_sizes) if eval_sizes is not None else [num_customers]
        self.counts = {"val": val_instances, "test": test_instances}
        self.eval_batch_size = eval_batch_size
        self.cache_dir = Path(cache_dir)
        self.reference_iterations = reference_iterations
        self.reference_workers = reference_workers
        self.cvrplib_instances = list(cvrplib_instances or [])
        self.cvrplib_dir = cvrplib_dir
        self.mixed_backhaul = mixed_backhaul
        self.convention = convention
        self.mvmoe_dir = mvmoe_dir
        self.seed = seed
        self.eval_sets: dict[str, list[VRPEvalBatch]] = {}
        self._cvrplib_sets = cvrplib_sets
        self._mvmoe_sets: dict[tuple[str, int], VRPEvalBatch] = {}

    @property
    def eval_names(self) -> list[str]:
        """Names of the val dataloaders in order ("CVRP/n20", ...); the test dataloaders are
        these followed by "cvrplib" when CVRPLIB instances are configured."""
        return [f"{v}/n{n}" for v in self.eval_variants for n in self.eval_sizes]

    def cache_path(self, split: str, variant_name: str, size: int) -> Path:
        """The npz file of one evaluation set; every setting it depends on is in the name."""
        budget = "none" if self.reference_iterations is None else str(self.reference_iterations)
        backhaul = "mixed" if self.mixed_backhaul else "strict"
        if self.convention == "mvmoe":
            backhaul = "signedrr"  # signed rule, references improved by `signed_search`
        count, seed = self.counts[split], self.seed
        stem = f"{split}_{variant_name}_n{size}_k{count}_seed{seed}_{self.convention}_{backhaul}"
        stem += f"_i{budget}"
        evaluated = self.evaluated_count(split)
        if evaluated < count:  # the first rows of the same k instances
            stem += f"_first{evaluated}"
        return self.cache_dir / f"{stem}.npz"

    def evaluated_count(self, split: str) -> int:
        """Instances per set of `split` that the attached trainer evaluates
        (`limit_<split>_batches` batches of `eval_batch_size`); all without a trainer."""
        trainer = getattr(self, "trainer", None)
        return evaluated_instances(trainer, split, self.counts[split], self.eval_batch_size)

    def prepare_data(self) -> None:
        """Generate, solve and save the val/test sets that are not cached yet (rank 0 only):
        under a trainer only those the running stage reads (fit and validate: val; test:
        test), so `train.py test` with strong references never solves a val set; without a
        trainer both."""
        function = None if self.trainer is None else self.trainer.state.fn
        needs = {TrainerFn.FITTING: ("val",), TrainerFn.VALIDATING: ("val",)}
        needs[TrainerFn.TESTING] = ("test",)
        for split in needs.get(function, SPLITS):
            self.prepare_split(split)

    def prepare_split(self, split: str) -> None:
        """Generate, solve and save the sets of one split ("val" or "test") not cached yet.

        A set's seed depends on (seed, split, variant, size) only, not on which other variants
        are listed, so a teacher and a multi-task model see the same CVRP test instances.
        """
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        if self.mvmoe_dir is not None:
            return  # MVMoE's files are read as they are
        for name in self.eval_variants:
            for size in self.eval_sizes:
                path = self.cache_path(split, name, size)
                if not path.is_file():
                    index = list(ALL_VARIANTS).index(variant(name).name)
                    seed = derived_seed(self.seed, SPLITS.index(split) + 1, index, size)
                    self._write_set(path, split, name, size, seed)

    def _write_set(self, path: Path, split: str, name: str, size: int, seed: int) -> None:
        """Generate the instances of one set of `split`, keep the first ones the trainer's
        batch limit evaluates, and solve their references, with progress lines."""
        count = self.evaluated_count(split)
        batch = generate(
            name,
            size,
            self.counts[split],
            seed=seed,
            mixed_backhaul=self.mixed_backhaul,
            convention=self.convention,
        ).index(slice(0, count))
        costs = np.full(count, np.nan)
        sequences = np.zeros((count, 1), dtype=np.int64)
        if self.reference_iterations is not None:
            solver = PyVRPSolver(self.reference_iterations, self.reference_workers)
            progress = ReferenceProgress(f"{split} {name}/n{size}", count)
            solutions = solver.solve(batch, progress)
            costs = np.array([s.cost for s in solutions])
            sequences = np.zeros((count, max(len(s.sequence) for s in solutions)), dtype=np.int64)
            for row, solution in enumerate(solutions):
                sequences[row, : len(solution.sequence)] = solution.sequence
        arrays = batch_arrays(batch)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial.npz")
        budget = np.array(self.reference_iterations or 0)  # 0: no reference
        np.savez(
            partial,
            reference_cost=costs,
            reference_solution=sequences,
            reference_iterations=budget,
            **arrays,
        )
        os.replace(partial, path)

    def load_set(self, split: str, name: str, size: int) -> VRPEvalBatch:
        """One cached evaluation set (run `prepare_data` first), or MVMoE's with `mvmoe_dir`."""
        if self.mvmoe_dir is not None:
            return self._mvmoe_split(split, name, size)
        path = self.cache_path(split, name, size)
        if not path.is_file():
            raise FileNotFoundError(f"cache_dir: no {path}; call prepare_data() first")
        with np.load(path) as data:
            batch = batch_from_arrays(data)
            cost = torch.from_numpy(data["reference_cost"])
        batch.check(str(path))
        return VRPEvalBatch(batch, cost, torch.ones_like(cost), f"{name}/n{size}")

    def _mvmoe_split(self, split: str, name: str, size: int) -> VRPEvalBatch:
        """Rows [0, test) of MVMoE's file for the test set, [test, test + val) for val."""
        test, val = self.counts["test"], self.counts["val"]
        if (name, size) not in self._mvmoe_sets:
            loaded = load_mvmoe_set(self.mvmoe_dir, name, size, test + val)
            self._mvmoe_sets[(name, size)] = loaded
        rows = slice(0, test) if split == "test" else slice(test, test + val)
        return self._mvmoe_sets[(name, size)].index(rows)

    def setup(self, stage: str | None = None) -> None:
        if stage in (None, "fit", "validate"):
            self.eval_sets["val"] = [
                self.load_set("val", v, n) for v in self.eval_variants for n in self.eval_sizes
            ]
        if stage in (None, "test"):
            self.eval_sets["test"] = [
                self.load_set("test", v, n) for v in self.eval_variants for n in self.eval_sizes
            ]
            self.eval_sets["cvrplib"] = self._cvrplib_sets

    def _epoch(self) -> int:
        return 0 if self.trainer is None else self.trainer.current_epoch

    def _rank(self) -> int:
        return 0 if self.trainer is None else self.trainer.global_rank

    def train_dataloader(self) -> DataLoader:
        dataset = GeneratedBatches(
            self.train_variants,
            self.num_customers,
            self.batch_size,
            self.batches_per_epoch,
            self.seed,
            self._rank(),
            self._epoch,
            self.mixed_backhaul,
            self.convention,
        )
        return DataLoader(dataset, batch_size=None)

    def val_dataloader(self) -> list[DataLoader]:
        return [self._loader([item]) for item in self.eval_sets["val"]]

    def test_dataloader(self) -> list[DataLoader]:
        loaders = [self._loader([item]) for item in self.eval_sets["test"]]
        if self.eval_sets["cvrplib"]:
            loaders.append(self._loader(self.eval_sets["cvrplib"]))
        return loaders

    def _loader(self, sets: list[VRPEvalBatch]) -> DataLoader:
        return DataLoader(EvalChunks(sets, self.eval_batch_size), batch_size=None)

    def transfer_batch_to_device(
        self, batch: VRPBatch | VRPEvalBatch, device: torch.device, dataloader_idx: int
    ) -> VRPBatch | VRPEvalBatch:
        """Move a batch (frozen dataclasses, which Lightning's default transfer rejects)."""
        return batch.to(device)
