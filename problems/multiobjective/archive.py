"""A bounded archive of mutually non-dominated evaluated points (minimisation)."""

from __future__ import annotations

import torch
from torch import Tensor


def dominates(a: Tensor, b: Tensor) -> Tensor:
    """`[n, m]` bool: row `i` of `a [n, M]` Pareto-dominates row `j` of `b [m, M]`."""
    le = (a.unsqueeze(1) <= b.unsqueeze(0)).all(dim=2)
    lt = (a.unsqueeze(1) < b.unsqueeze(0)).any(dim=2)
    return le & lt


def non_dominated(f: Tensor) -> Tensor:
    """`[n]` bool: rows of `f [n, M]` no other row dominates (duplicates all kept)."""
    return ~dominates(f, f).any(dim=0)


def crowding_distance(f: Tensor) -> Tensor:
    """NSGA-II crowding distance of each row of `f [n, M]` (boundary points: inf)."""
    n = len(f)
    order = f.argsort(dim=0)  # [n, M]
    ranked = f.gather(0, order)
    span = (ranked[-1] - ranked[0]).clamp_min(1e-300)
    gaps = torch.full_like(f, float("inf"))
    if n > 2:
        gaps[1:-1] = (ranked[2:] - ranked[:-2]) / span
    distance = torch.zeros_like(f)
    distance.scatter_(0, order, gaps)
    return distance.sum(dim=1)


class ParetoArchive:
    """Keeps the non-dominated points among all it is shown, at most `capacity` of them; when
    full, the most crowded points (smallest crowding distance) are dropped first."""

    def __init__(self, capacity: int = 1000) -> None:
        if capacity < 2:
            raise ValueError(f"capacity must be >= 2, got {capacity}")
        self.capacity = capacity
        self.x: Tensor | None = None
        self.f: Tensor | None = None

    def update(self, x: Tensor, f: Tensor) -> None:
        """Merge the points `x [n, D]` with objectives `f [n, M]` (non-finite rows ignored)."""
        finite = torch.isfinite(f).all(dim=1)
        x, f = x[finite], f[finite]
        keep = non_dominated(f)
        x, f = x[keep], f[keep]
        if self.x is not None and len(f):
            x, f = x.to(self.x), f.to(self.f)
            new_vs_old = dominates(f, self.f)  # [n, A]: new dominates old
            old_vs_new = dominates(self.f, f)  # [A, n]
            survivors = ~new_vs_old.any(dim=0)
            fresh = ~old_vs_new.any(dim=0)
            x = torch.cat([self.x[survivors], x[fresh]])
            f = torch.cat([self.f[survivors], f[fresh]])
        elif self.x is not None:
            x, f = self.x, self.f
        while len(f) > self.capacity:  # drop in rounds, recomputing crowding after each
            excess = len(f) - self.capacity
            drop = crowding_distance(f).argsort()[: max(1, excess // 2)]
            mask = torch.ones(len(f), dtype=torch.bool, device=f.device)
            mask[drop] = False
            x, f = x[mask], f[mask]
        self.x, self.f = x, f

    def state_dict(self) -> dict[str, Tensor | None]:
        """The archive's points, for checkpoints."""
        return {"x": self.x, "f": self.f}

    def load_state_dict(self, state: dict[str, Tensor | None]) -> None:
        """Restore the points saved by `state_dict`."""
        self.x, self.f = state["x"], state["f"]
