"""Scalarisations of objective vectors by a preference: Tchebycheff (the ASF form Neural-ES
uses) and penalty-based boundary intersection (PBI)."""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor

SCALARIZATIONS = ("tchebycheff", "pbi")


def tchebycheff(f: Tensor, pref: Tensor, ideal: Tensor, eps: float = 1e-16) -> Tensor:
    """`max_i (f_i - z_i) / w_i` for rows of `f [n, M]`, preferences `pref [n, M]`, ideal `z [M]`
    (zero weights replaced by `eps`, as in pymoo's ASF that the authors call): `[n]`."""
    return ((f - ideal) / pref.clamp_min(eps)).amax(dim=1)


def pbi(f: Tensor, pref: Tensor, ideal: Tensor, theta: float = 5.0) -> Tensor:
    """PBI (Zhang & Li, 2007): `d1 + theta * d2`, `d1` the distance along the preference
    direction from the ideal point, `d2` the Euclidean distance to that line: `[n]`."""
    direction = pref / pref.norm(dim=1, keepdim=True)
    shifted = f - ideal
    d1 = (shifted * direction).sum(dim=1)
    d2 = (shifted - d1.unsqueeze(1) * direction).norm(dim=1)
    return d1 + theta * d2


def scalarize(
    f: Tensor,
    pref: Tensor,
    ideal: Tensor,
    method: Literal["tchebycheff", "pbi"] = "tchebycheff",
    theta: float = 5.0,
) -> Tensor:
    """The scalarisation named by `method` (one of SCALARIZATIONS)."""
    if method == "tchebycheff":
        return tchebycheff(f, pref, ideal)
    if method == "pbi":
        return pbi(f, pref, ideal, theta)
    raise ValueError(f"method must be one of {list(SCALARIZATIONS)}, got {method!r}")


def check_scalarization(method: str, theta: float) -> None:
    """Refuse an unknown scalarisation name or a non-positive PBI theta."""
    if method not in SCALARIZATIONS:
        raise ValueError(f"scalarization must be one of {list(SCALARIZATIONS)}, got {method!r}")
    if not theta > 0:
        raise ValueError(f"pbi_theta must be > 0, got {theta}")


def running_ideal(ideal: Tensor, f: Tensor) -> Tensor:
    """The ideal point updated with `f [n, M]`: elementwise minimum over finite rows."""
    finite = f[torch.isfinite(f).all(dim=1)]
    return ideal if len(finite) == 0 else torch.minimum(ideal, finite.amin(dim=0).to(ideal))
