"""Synthetic QoSD instances (and Gnutella08 as a test set) as torch-geometric batches.

Each split holds seeded instances from `SyntheticQoSDConfig`; every graph carries node features
`x`, `edge_attr` (see `optiforge.problems.qosd.features`), the caps, the label `stress` = x*/cap of
the best classical solution (the LP optimum on linear instances, the best pruned greedy otherwise; 0
where cap = 0), and the `QoSDInstance` itself (collated into a list) so test steps can repair and
check real solutions. `test_on_gnutella` replaces the synthetic test split by the real Gnutella08
instance under the same edge function.

Labelling solves each instance classically (seconds per graph at n = 100); `setup` prints
progress lines on stderr while it does (`ReferenceProgress`), and labels only the val / test
instances that the trainer's `limit_val_batches` / `limit_test_batches` evaluate (the first
ones; instance i of a split is the same whatever the split size).
"""

from __future__ import annotations

import lightning as L
import numpy as np
import torch
from torch_geometric.data import Data
from torch_geometric.loader import DataLoader

from optiforge.datamodules.reference_progress import ReferenceProgress, evaluated_instances
from optiforge.problems.qosd import SyntheticQoSDConfig, generate_instance, load_gnutella08
from optiforge.problems.qosd.classical_best import classical_best
from optiforge.problems.qosd.features import qosd_features
from optiforge.problems.qosd.gnutella import gnutella08_files
from optiforge.problems.qosd.instance import QoSDInstance

SPLIT_SEED_OFFSETS = {"train": 0, "val": 1_000_000, "test": 2_000_000}


def instance_graph(instance: QoSDInstance, labelled: bool = True) -> Data:
    """The torch-geometric graph of one instance, with its classical label if `labelled`."""
    node, edge = qosd_features(instance)
    stress = np.zeros(instance.num_edges)
    if labelled:
        best = classical_best(instance)
        stress = np.divide(best, instance.cap, out=np.zeros_like(best), where=instance.cap > 0)
    return Data(
        x=torch.from_numpy(node),
        edge_index=torch.from_numpy(instance.edge_index),
        edge_attr=torch.from_numpy(edge),
        cap=torch.from_numpy(instance.cap).float(),
        stress=torch.from_numpy(stress).float(),
        instance=instance,
        num_nodes=instance.num_nodes,
    )


class QoSDDataModule(L.LightningDataModule):
    """Args:
    graph_model / num_nodes / edge_probability / attachment / num_pairs / edge_function /
    cap_low / cap_high / threshold_factor: the synthetic distribution (`SyntheticQoSDConfig`).
    train_size / val_size / test_size: instances per split (>= 1).
    batch_size: graphs per batch.
    seed: base seed; split s, instance i uses seed + offset(s) + i.
    test_on_gnutella: test on the real Gnutella08 instance instead of synthetic ones.
    gnutella_threshold_factor: its T as a multiple of the median unperturbed pair distance.
    gnutella_dir: the folder holding Gnutella08's graph.txt and pairs.txt (None: gnutella08/ in
        the data folder, see `optiforge.problems.data_paths.data_dir`); checked here, before
        training.
    """

    def __init__(
        self,
        graph_model: str = "erdos_renyi",
        num_nodes: int = 100,
        edge_probability: float = 0.05,
        attachment: int = 3,
        num_pairs: int = 5,
        edge_function: str = "linear",
        cap_low: int = 2,
        cap_high: int = 5,
        threshold_factor: float = 1.5,
        train_size: int = 256,
        val_size: int = 32,
        test_size: int = 64,
        batch_size: int = 16,
        seed: int = 0,
        test_on_gnutella: bool = False,
        gnutella_threshold_factor: float = 1.0,
        gnutella_dir: str | None = None,
    ) -> None:
        super().__init__()
        for name, value in (
            ("train_size", train_size),
            ("val_size", val_size),
            ("test_size", test_size),
            ("batch_size", batch_size),
        ):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        missing = [str(p) for p in gnutella08_files(gnutella_dir) if not p.is_file()]
        if test_on_gnutella and missing:
            raise ValueError(
                f"data.gnutella_dir: Gnutella08 file missing: {missing[0]} (point "
                "data.gnutella_dir or OPTIFORGE_DATA at the folder of graph.txt and pairs.txt)"
            )
        self.save_hyperparameters()
        self.config = SyntheticQoSDConfig(
            graph_model=graph_model,
            num_nodes=num_nodes,
            edge_probability=edge_probability,
            attachment=attachment,
            num_pairs=num_pairs,
            edge_function=edge_function,
            cap_low=cap_low,
            cap_high=cap_high,
            threshold_factor=threshold_factor,
        )
        self.sizes = {"train": train_size, "val": val_size, "test": test_size}
        self.graphs: dict[str, list[Data]] = {}

    def evaluated_size(self, split: str) -> int:
        """Instances of `split` used: all for training, the evaluated ones for val / test."""
        if split == "train":
            return self.sizes[split]
        trainer = getattr(self, "trainer", None)
        return evaluated_instances(trainer, split, self.sizes[split], self.hparams.batch_size)

    def split_instances(self, split: str) -> list[QoSDInstance]:
        """The split's instances (Gnutella08 alone for the test split if asked)."""
        if split == "test" and self.hparams.test_on_gnutella:
            factor = self.hparams.gnutella_threshold_factor
            directory = self.hparams.gnutella_dir
            return [load_gnutella08(self.config.edge_function, factor, directory)]
        base = self.hparams.seed + SPLIT_SEED_OFFSETS[split]
        count = self.evaluated_size(split)
        return [generate_instance(self.config, base + i) for i in range(count)]

    def setup(self, stage: str) -> None:
        splits = ("train", "val") if stage == "fit" else ("val",) if stage == "validate" else ()
        splits += ("test",) if stage in ("test", "predict") else ()
        for split in splits:
            if split not in self.graphs:
                instances = self.split_instances(split)
                progress = ReferenceProgress(split, len(instances))
                graphs = []
                for instance in instances:
                    graphs.append(instance_graph(instance))
                    progress(len(graphs), len(instances))
                self.graphs[split] = graphs

    def train_dataloader(self) -> DataLoader:
        return DataLoader(self.graphs["train"], batch_size=self.hparams.batch_size, shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return DataLoader(self.graphs["val"], batch_size=self.hparams.batch_size)

    def test_dataloader(self) -> DataLoader:
        return DataLoader(self.graphs["test"], batch_size=self.hparams.batch_size)
