"""Forge's feasible solutions per training instance: the data Morph learns from.

For an instance and Forge's predicted stress s, the bank holds `num_samples` raw proposals
(s itself, then s + noise_scale * N(0, 1) clipped to [0, 1]) and the classical label, each
with its PPS repair (feasible, minimal) and log(budget / best budget in the bank). Built once
per instance, on first use, and kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from optiforge.lightning_modules.hephaestus.predictive_path_stressing import (
    predictive_path_stressing,
)
from optiforge.problems.qosd.instance import QoSDInstance
from optiforge.problems.qosd.path_stressing import prune, stress_paths


@dataclass(frozen=True)
class SolutionSet:
    """raw and repaired stress [S, E] (float32) and log budget ratios [S]."""

    raw: np.ndarray
    repaired: np.ndarray
    log_ratio: np.ndarray


def build_solution_set(
    instance: QoSDInstance,
    predicted: np.ndarray,
    label: np.ndarray,
    num_samples: int,
    noise_scale: float,
    rng: np.random.Generator,
) -> SolutionSet:
    """Proposals around Forge's stress (+ the label), repaired by PPS and scored."""
    noise = rng.standard_normal((num_samples - 1, instance.num_edges)) * noise_scale
    raw = np.concatenate([predicted[None], np.clip(predicted + noise, 0, 1), label[None]])
    greedy = prune(instance, stress_paths(instance))
    repaired = np.stack([predictive_path_stressing(instance, s, greedy) for s in raw])
    budgets = repaired.sum(axis=1)
    stress = np.divide(repaired, instance.cap, out=np.zeros_like(repaired), where=instance.cap > 0)
    return SolutionSet(
        raw.astype(np.float32),
        np.clip(stress, 0, 1).astype(np.float32),
        np.log(budgets / max(budgets.min(), 1e-12)).astype(np.float32),
    )
