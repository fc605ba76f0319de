"""COMPAS as a regression data set, split into equal per-node shards.

Target: COMPAS's own decile risk score (1-10), standardized. Features: z-scored age, and
z-scored log1p of the juvenile felony / misdemeanour / other and prior counts, indicators for
female, misdemeanour charge and three race groups (African-American, Caucasian, Hispanic; the
others are the baseline), and an intercept column (d = 11). Rows are shuffled with `seed` and
cut into `nodes` equal shards; the N mod nodes rows left over are not used by anyone, and the
reference saddle point is computed on exactly the rows the nodes hold.
"""

from __future__ import annotations

import csv
from pathlib import Path

import torch
from torch import Tensor

RACES = ("African-American", "Caucasian", "Hispanic")
COUNT_COLUMNS = ("juv_fel_count", "juv_misd_count", "juv_other_count", "priors_count")


def standardize(column: Tensor) -> Tensor:
    """(column - mean) / std."""
    return (column - column.mean()) / column.std()


def load_compas_regression(path: str | Path) -> tuple[Tensor, Tensor]:
    """Features [N, 11] and standardized decile scores [N] (float64) from compas.csv."""
    if not Path(path).is_file():
        raise ValueError(f"data: no file at {str(path)!r} (expected the COMPAS compas.csv)")
    with open(path, newline="") as handle:
        records = list(csv.DictReader(handle))

    def numbers(name: str) -> Tensor:
        return torch.tensor([float(record[name]) for record in records], dtype=torch.float64)

    def flags(name: str, value: str) -> Tensor:
        return torch.tensor([float(r[name] == value) for r in records], dtype=torch.float64)

    columns = [standardize(numbers("age"))]
    columns += [standardize(torch.log1p(numbers(name))) for name in COUNT_COLUMNS]
    columns += [flags("sex", "Female"), flags("c_charge_degree", "M")]
    columns += [flags("race", race) for race in RACES]
    columns.append(torch.ones(len(records), dtype=torch.float64))
    return torch.stack(columns, dim=1), standardize(numbers("decile_score"))


def split_shards(
    features: Tensor, targets: Tensor, nodes: int, seed: int = 0, by_target: bool = False
) -> tuple[Tensor, Tensor]:
    """Equal shards: features [nodes, N // nodes, d] and targets [nodes, N // nodes]; shuffled
    rows (i.i.d. shards), or with `by_target` the kept rows sorted by target, so node i holds
    the i-th target quantile range (heterogeneous shards, whose local saddles differ)."""
    if not isinstance(nodes, int) or nodes < 1:
        raise ValueError(f"nodes: must be an integer >= 1, got {nodes!r}")
    shard = features.shape[0] // nodes
    if shard < 1:
        raise ValueError(f"nodes: {nodes} nodes need at least {nodes} samples, got {len(targets)}")
    order = torch.randperm(features.shape[0], generator=torch.Generator().manual_seed(seed))
    keep = order[: shard * nodes]
    if by_target:
        keep = keep[torch.argsort(targets[keep], stable=True)]
    return features[keep].reshape(nodes, shard, -1), targets[keep].reshape(nodes, shard)
