"""Linear minimization oracles (LMOs) over norm balls, the building block of the Scion family.

For a norm ||.|| with unit ball B, `lmo(d) = argmin_{v in B} <d, v>` (Pethick et al. 2025, Eq. 2):
the point of the ball that decreases a linear model with gradient `d` the most, so it points
*against* `d`. Every LMO here already includes the shape-dependent radius of its ball (e.g.
sqrt(d_out / d_in) for the spectral norm), and `dual_norm(d) = -<d, lmo(d)>` is the dual norm of
`d` in the same scaled geometry, the quantity that generalized gradient norm clipping compares
with rho.

Shapes: a weight is read as a linear map [d_out, d_in] (torch's Linear layout); a conv weight
[out, in, kh, kw] is flattened to [out, in * kh * kw]; 0-D and 1-D tensors are vectors.
"""

from __future__ import annotations

import inspect
import math
from typing import Any, ClassVar, Literal

import torch
from torch import Tensor

from optiforge.optimizers.validation import require_choice, require_positive

# Quintic Newton-Schulz coefficients (Jordan et al. 2024, Muon): p(s) = a s + b s^3 + c s^5 maps
# every singular value in (0, 1] into roughly [0.7, 1.2] within ~5 steps; it trades exact
# convergence to 1 for speed, which is all a steepest-descent direction needs.
NEWTON_SCHULZ_COEFFICIENTS = (3.4445, -4.7750, 2.0315)


NEWTON_SCHULZ_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def _as_matrix(d: Tensor) -> Tensor:
    """View `d` [d_out, ...] as the matrix [d_out, d_in] of the linear map it stores."""
    return d.reshape(d.shape[0], -1)


def _safe(norm: Tensor) -> Tensor:
    """Divisor that leaves a zero vector at exactly zero (no eps bias on non-zero inputs)."""
    return torch.where(norm > 0, norm, torch.ones_like(norm))


class LMO:
    """Base class: `__call__(d)` returns the scaled LMO direction (same shape and dtype as `d`).

    Attributes:
        min_ndim: the fewest dimensions a tensor must have for this norm to make sense.
    """

    min_ndim: ClassVar[int] = 0

    def __call__(self, d: Tensor) -> Tensor:
        raise NotImplementedError

    def dual_norm(self, d: Tensor) -> Tensor:
        """||d||_* = max_{v in B} <d, v> = -<d, lmo(d)> (a 0-D tensor, >= 0)."""
        return -torch.sum(d * self(d))

    def check_shape(self, shape: torch.Size, field: str) -> None:
        """Raise `ValueError` (naming `field`) if a tensor of `shape` cannot use this norm."""
        if len(shape) < self.min_ndim:
            raise ValueError(
                f"{field}: norm {type(self).__name__!r} needs tensors with >= {self.min_ndim} "
                f"dims, got shape {tuple(shape)}; use 'BiasRMS' or 'Auto' for vectors"
            )

    def __repr__(self) -> str:
        fields = ", ".join(f"{key}={value!r}" for key, value in vars(self).items())
        return f"{type(self).__name__}({fields})"


class Spectral(LMO):
    """Spectral-norm ball of radius sqrt(d_out / d_in) (the RMS -> RMS operator norm).

    lmo(d) = -sqrt(d_out / d_in) U V^T for d = U S V^T; U V^T is approximated by `steps`
    quintic Newton-Schulz iterations on the Frobenius-normalized matrix (in `dtype`: float32 by
    default; bfloat16 is what the reference code uses and is ~2x faster on CPUs with bf16
    units, at a coarser approximation), so the dual
    norm is approximately sqrt(d_out / d_in) * ||d||_nuclear. Conv weights use the flattened
    [out, in * kh * kw] matrix, hence d_in = in * kh * kw (the reference code's `SpectralConv`
    instead scales by sqrt(out / in) / k^2).
    """

    min_ndim = 2

    def __init__(self, steps: int = 5, dtype: Literal["float32", "bfloat16"] = "float32") -> None:
        require_positive("steps", steps)
        require_choice("norm_kwargs.dtype", dtype, NEWTON_SCHULZ_DTYPES)
        self.steps = steps
        self.dtype = dtype

    def orthogonalize(self, matrix: Tensor) -> Tensor:
        """Approximate U V^T of `matrix` [m, n] (in `dtype`); a zero matrix stays zero."""
        x = matrix.to(NEWTON_SCHULZ_DTYPES[self.dtype])
        transposed = x.shape[0] > x.shape[1]
        if transposed:  # iterate on the smaller Gram matrix x x^T
            x = x.T
        x = x / _safe(torch.linalg.matrix_norm(x))
        a, b, c = NEWTON_SCHULZ_COEFFICIENTS
        for _ in range(self.steps):
            gram = x @ x.T
            x = a * x + (b * gram + c * gram @ gram) @ x
        return x.T if transposed else x

    def __call__(self, d: Tensor) -> Tensor:
        matrix = _as_matrix(d)
        radius = math.sqrt(matrix.shape[0] / matrix.shape[1])
        return (-radius * self.orthogonalize(matrix)).reshape(d.shape).to(d.dtype)


class Sign(LMO):
    """Max-entry (l1 -> l_inf operator) ball of radius 1 / d_in: lmo(d) = -sign(d) / d_in.

    Dual norm ||d||_1 / d_in. Vectors use d_in = 1.
    """

    def __call__(self, d: Tensor) -> Tensor:
        d_in = _as_matrix(d).shape[1] if d.ndim >= 2 else 1
        return -torch.sign(d) / d_in


class _AxisNorm(LMO):
    """Shared shape handling of `ColNorm` / `RowNorm`: flatten to [d_out, d_in] (or its
    transpose), normalize along one axis, restore the shape."""

    min_ndim = 2

    def __init__(self, transpose: bool = False) -> None:
        self.transpose = transpose

    def normalize(self, matrix: Tensor) -> Tensor:
        """The LMO of a [d_out, d_in] matrix."""
        raise NotImplementedError

    def __call__(self, d: Tensor) -> Tensor:
        matrix = _as_matrix(d)
        out = self.normalize(matrix.T if self.transpose else matrix)
        return (out.T if self.transpose else out).reshape(d.shape)


class ColNorm(_AxisNorm):
    """l1 -> RMS operator-norm ball: every column j of [d_out, d_in] becomes
    -sqrt(d_out) d[:, j] / ||d[:, j]||_2 (unit RMS). Dual norm sqrt(d_out) sum_j ||d[:, j]||_2.

    Args:
        transpose: read the tensor as [d_in, d_out], e.g. an `nn.Embedding` table
            [vocab, dim], whose rows are the columns of the map one-hot(vocab) -> dim.
    """

    def normalize(self, matrix: Tensor) -> Tensor:
        norms = torch.linalg.vector_norm(matrix, dim=0, keepdim=True)
        return -math.sqrt(matrix.shape[0]) * matrix / _safe(norms)


class RowNorm(_AxisNorm):
    """RMS -> l_inf operator-norm ball: every row i of [d_out, d_in] becomes
    -d[i, :] / (sqrt(d_in) ||d[i, :]||_2). Dual norm sum_i ||d[i, :]||_2 / sqrt(d_in).

    Args:
        transpose: read the tensor as [d_in, d_out] (see `ColNorm`).
    """

    def normalize(self, matrix: Tensor) -> Tensor:
        norms = torch.linalg.vector_norm(matrix, dim=1, keepdim=True)
        return -matrix / (math.sqrt(matrix.shape[1]) * _safe(norms))


class BiasRMS(LMO):
    """RMS-norm ball for vectors (biases, norm gains): lmo(d) = -sqrt(n) d / ||d||_2.

    Dual norm sqrt(n) ||d||_2, n = d.numel(). Any shape is read as one flat vector.
    """

    def __call__(self, d: Tensor) -> Tensor:
        return -math.sqrt(d.numel()) * d / _safe(torch.linalg.vector_norm(d))


class Auto(LMO):
    """Chooses by tensor rank: 0-D/1-D -> `BiasRMS`, matrices and conv weights -> `Spectral`."""

    def __init__(self, steps: int = 5, dtype: Literal["float32", "bfloat16"] = "float32") -> None:
        self.spectral = Spectral(steps, dtype)
        self.vector = BiasRMS()

    def __call__(self, d: Tensor) -> Tensor:
        return self.vector(d) if d.ndim <= 1 else self.spectral(d)


LMOS: dict[str, type[LMO]] = {
    cls.__name__: cls for cls in (Spectral, Sign, ColNorm, RowNorm, BiasRMS, Auto)
}


def make_lmo(name: str, **kwargs: Any) -> LMO:
    """Build the LMO called `name` (case-insensitive, e.g. "Spectral" or "auto") with `kwargs`.

    Raises `ValueError` naming the field (`norm` or `norm_kwargs`) and the allowed values for an
    unknown name or keyword; there is no silent identity fallback.
    """
    by_lower = {key.lower(): cls for key, cls in LMOS.items()}
    cls = by_lower.get(name.lower()) if isinstance(name, str) else None
    if cls is None:
        raise ValueError(f"norm must be one of {sorted(LMOS)} (any case), got {name!r}")
    allowed = list(inspect.signature(cls).parameters)
    unknown = sorted(set(kwargs) - set(allowed))
    if unknown:
        raise ValueError(
            f"norm_kwargs {unknown} are not accepted by norm {cls.__name__!r}; allowed: {allowed}"
        )
    return cls(**kwargs)
