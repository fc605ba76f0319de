"""Routes of a VRP solution: the one place that splits a 0-separated node sequence."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch


def split_routes(solution: Sequence[int] | np.ndarray | torch.Tensor) -> list[list[int]]:
    """Customer lists of the non-empty routes of a node sequence with 0 (the depot) between
    routes: [0, 2, 1, 0, 0, 3, 0] -> [[2, 1], [3]] (leading, trailing, repeated zeros dropped)."""
    if isinstance(solution, torch.Tensor):
        solution = solution.detach().cpu().numpy()
    routes: list[list[int]] = [[]]
    for node in np.asarray(solution).reshape(-1).tolist():
        if node == 0:
            routes.append([])
        else:
            routes[-1].append(int(node))
    return [route for route in routes if route]
