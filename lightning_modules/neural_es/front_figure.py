"""Pareto-front figures: a 2-D scatter for two objectives, a 3-D projection for three."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from torch import Tensor  # noqa: E402


def front_figure(fronts: dict[str, Tensor], true_front: Tensor, title: str) -> Figure:
    """The true front (grey) and each named point set `[n, M]` (M = 2 or 3) in one axes."""
    num_obj = true_front.shape[1]
    if num_obj not in (2, 3):
        raise ValueError(f"true_front must have 2 or 3 objectives, got {num_obj}")
    fig = plt.figure(figsize=(4.5, 4.0))
    ax = fig.add_subplot(projection="3d" if num_obj == 3 else None)
    true = true_front.detach().cpu().numpy()
    ax.scatter(*true.T, s=2, c="0.7", label="true front")
    for name, points in fronts.items():
        values = points.detach().cpu().double().numpy()
        ax.scatter(*values.T, s=6, label=name)
    ax.set_xlabel("f1")
    ax.set_ylabel("f2")
    if num_obj == 3:
        ax.set_zlabel("f3")
        ax.view_init(elev=30, azim=45)
    limit = 1.5 * float(true.max())
    for setter in (ax.set_xlim, ax.set_ylim) + ((ax.set_zlim,) if num_obj == 3 else ()):
        setter(0.0, limit)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    return fig
