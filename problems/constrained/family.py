"""Shared part of every parametric constrained family: min_y f(y) s.t. A y = x, g(y; x) <= 0.

A family holds the data shared by all its instances (float64 torch tensors); an instance is one
parameter row x in [-1, 1]^num_eq. All functions take a batch y [B, num_vars], x [B, num_eq] and
are plain differentiable torch, vectorized over the batch (FSNet's feasibility step runs them
inside batched L-BFGS).

Objectives (FSNet notes; Q = diag(q) with q >= 0):
- convex: 0.5 y^T Q y + p^T y
- nonconvex: 0.5 y^T Q y + p^T sin(y)
- nonsmooth: the nonconvex objective + 0.1 ||y||_2 (FSNet's "nonsmooth nonconvex" datasets). It
  is differentiable except at y = 0, which is infeasible whenever x != 0.

Constraint argument. The subclasses write their inequalities with a linear map G applied to
psi(y; x). With `sine_constraints` off psi = y. With it on (FSNet's nonconvex and nonsmooth
families) psi = sin(y) - sin(y0) + y0 with y0 = A^+ x. FSNet's own nonconvex QP constraint
G sin(y) <= h * cos(x) multiplies an n_ineq-vector by an n_eq-vector, which is defined only when
n_ineq == n_eq, and nothing proves y0 feasible for it. The shifted form is defined for all sizes,
is nonconvex in y through sin, depends on x nonlinearly like FSNet's cos(x) right-hand side, and
psi(y0; x) = y0, so at y0 every constraint takes exactly its convex family's value: the convex
feasibility-by-construction argument carries over unchanged.

Box: FSNet bounds every variable to [-5, 5] (its network outputs a sigmoid rescaled to that box
and its solvers enforce it); with `box_bound` set, `ineq_residual` appends the 2 * num_vars rows
y - b <= 0 and -b - y <= 0 after the problem's own inequalities, so the squared violation is
exactly the quantity FSNet's feasibility step minimizes. y0 stays in the box for every x in
[-1, 1]^num_eq when every row of A^+ has l1 norm <= b; the constructor checks this.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
import torch
from torch import Tensor

ObjectiveKind = Literal["convex", "nonconvex", "nonsmooth"]
OBJECTIVE_KINDS: tuple[str, ...] = get_args(ObjectiveKind)
NORM_WEIGHT = 0.1
PARAMETER_LOW, PARAMETER_HIGH = -1.0, 1.0
PARAMETER_STREAM = 1


@dataclass(frozen=True)
class Violation:
    """Per-instance violations [B]: max |h|, max relu(g) and ||h||^2 + ||relu(g)||^2."""

    max_eq: Tensor
    max_ineq: Tensor
    squared: Tensor

    def within(self, tolerance: float) -> Tensor:
        """[B] bool: both max violations at most `tolerance` (the feasible-rate test)."""
        return (self.max_eq <= tolerance) & (self.max_ineq <= tolerance)


@dataclass(frozen=True, eq=False)
class ConstrainedFamily(ABC):
    """Objective, equalities A y = x and optional box shared by the QP, QCQP and SOCP families.

    Q [n, n], p [n], A [m, n] and A_pinv = A^+ [n, m]; subclasses add their inequality data.
    """

    name: str
    objective_kind: str
    sine_constraints: bool
    box_bound: float | None
    seed: int
    Q: Tensor
    p: Tensor
    A: Tensor
    A_pinv: Tensor

    def __post_init__(self) -> None:
        """Reject an unknown objective or a box that does not contain A^+ x for all x."""
        if self.objective_kind not in OBJECTIVE_KINDS:
            raise ValueError(
                f"objective_kind must be one of {OBJECTIVE_KINDS}, got {self.objective_kind!r}"
            )
        if self.box_bound is None:
            return
        if self.box_bound <= 0:
            raise ValueError(f"box_bound must be positive or None, got {self.box_bound}")
        reach = float(self.A_pinv.abs().sum(dim=1).max())
        if reach > self.box_bound:
            raise ValueError(
                f"box_bound {self.box_bound} is smaller than max_j ||A^+_j||_1 = {reach:.3f} "
                f"(seed {self.seed}): A^+ x could leave the box; use another seed"
            )

    @property
    def num_vars(self) -> int:
        """Number of decision variables n."""
        return self.A.shape[1]

    @property
    def num_eq(self) -> int:
        """Number of equalities m, also the size of the parameter x."""
        return self.A.shape[0]

    @property
    @abstractmethod
    def num_ineq(self) -> int:
        """Number of the problem's own inequalities (box rows not counted)."""

    @property
    def num_ineq_residuals(self) -> int:
        """Columns of `ineq_residual`: the problem's inequalities, then 2 n box rows if boxed."""
        return self.num_ineq + (0 if self.box_bound is None else 2 * self.num_vars)

    @property
    def is_convex(self) -> bool:
        """Whether every instance is a convex program (then cvxpy solves it globally)."""
        return self.objective_kind == "convex" and not self.sine_constraints

    def sample_parameters(self, num_instances: int, seed: int) -> Tensor:
        """x ~ U[-1, 1]^num_eq, [num_instances, num_eq] float64, same seed same bits.

        Drawn from stream (seed, 1) while the family data use stream (seed, 0), so a parameter
        seed equal to the family seed does not reuse the family's random numbers.
        """
        if not isinstance(num_instances, int) or num_instances < 1:
            raise ValueError(f"num_instances must be a positive integer, got {num_instances!r}")
        if not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        rng = np.random.default_rng([seed, PARAMETER_STREAM])
        draws = rng.uniform(PARAMETER_LOW, PARAMETER_HIGH, size=(num_instances, self.num_eq))
        return torch.from_numpy(draws).to(device=self.A.device, dtype=self.A.dtype)

    def check_parameters(self, x: Tensor) -> None:
        """Raise ValueError unless x is a finite [B, num_eq] tensor with the data's dtype."""
        self._check_tensor("x", x, self.num_eq, "num_eq")

    def check_feasible_parameters(self, x: Tensor) -> None:
        """`check_parameters`, and x inside the parameter box [-1, 1]^num_eq: outside it no
        instance is guaranteed feasible (the reference solvers still take such x and flag the
        instances they find infeasible)."""
        self.check_parameters(x)
        if bool((x < PARAMETER_LOW).any() or (x > PARAMETER_HIGH).any()):
            raise ValueError(
                f"x must lie in [{PARAMETER_LOW}, {PARAMETER_HIGH}]^num_eq, where every instance "
                f"is feasible by construction; got values in [{float(x.min()):.3g}, "
                f"{float(x.max()):.3g}]"
            )

    def constructed_point(self, x: Tensor) -> Tensor:
        """y0 = A^+ x [B, num_vars]: feasible by construction for every x in [-1, 1]^num_eq."""
        self.check_parameters(x)
        return x @ self.A_pinv.T

    def objective(self, y: Tensor, x: Tensor) -> Tensor:
        """f(y) [B]; x is checked like y but unused (no family's objective depends on it)."""
        self._check_batch(y, x)
        value = 0.5 * ((y @ self.Q) * y).sum(dim=-1)
        if self.objective_kind == "convex":
            return value + y @ self.p
        value = value + torch.sin(y) @ self.p
        if self.objective_kind == "nonsmooth":
            value = value + NORM_WEIGHT * torch.linalg.vector_norm(y, dim=-1)
        return value

    def eq_residual(self, y: Tensor, x: Tensor) -> Tensor:
        """h(y; x) = A y - x [B, num_eq]."""
        self._check_batch(y, x)
        return y @ self.A.T - x

    def problem_ineq_residual(self, y: Tensor, x: Tensor) -> Tensor:
        """The problem's own inequalities g(y; x) <= 0 without the box, [B, num_ineq]."""
        self._check_batch(y, x)
        return self._problem_ineq(y, x)

    def problem_ineq_jacobian(self, y: Tensor, x: Tensor) -> Tensor:
        """d g(y; x) / dy of the problem's own inequalities [B, num_ineq, num_vars], in closed
        form: one pass over the data instead of one backward pass per inequality (the SLSQP
        references need it every iteration)."""
        self._check_batch(y, x)
        return self._problem_ineq_jacobian(y, x)

    def ineq_residual(self, y: Tensor, x: Tensor) -> Tensor:
        """All inequalities g(y; x) <= 0 [B, num_ineq_residuals]: the problem's, then the box."""
        self._check_batch(y, x)
        rows = self._problem_ineq(y, x)
        if self.box_bound is None:
            return rows
        return torch.cat([rows, y - self.box_bound, -self.box_bound - y], dim=-1)

    def violation(self, y: Tensor, x: Tensor) -> Violation:
        """Max equality, max inequality and squared violation per instance."""
        eq = self.eq_residual(y, x)
        ineq = torch.relu(self.ineq_residual(y, x))
        return Violation(
            max_eq=eq.abs().amax(dim=-1),
            max_ineq=ineq.amax(dim=-1),
            squared=eq.square().sum(dim=-1) + ineq.square().sum(dim=-1),
        )

    def squared_violation(self, y: Tensor, x: Tensor) -> Tensor:
        """||h(y; x)||^2 + ||relu(g(y; x))||^2 [B]: what FSNet's feasibility step minimizes.

        Equal to `violation(y, x).squared`, computed without the maxima and with one input
        check: it is the inner loop of the feasibility step. The box rows y - b and -b - y
        (b > 0) contribute relu(|y| - b)^2 together.
        """
        self._check_batch(y, x)
        eq = y @ self.A.T - x
        total = eq.square().sum(dim=-1) + torch.relu(self._problem_ineq(y, x)).square().sum(dim=-1)
        if self.box_bound is None:
            return total
        return total + torch.relu(y.abs() - self.box_bound).square().sum(dim=-1)

    def arrays(self) -> dict[str, np.ndarray]:
        """The family's tensors as numpy arrays, keyed by field name (for caching)."""
        return {key: getattr(self, key).detach().cpu().numpy() for key in self._tensor_names()}

    def with_arrays(self, arrays: dict[str, np.ndarray]) -> ConstrainedFamily:
        """A copy whose tensors are replaced by `arrays` (same keys as `arrays()`)."""
        expected = self._tensor_names()
        if set(arrays) != set(expected):
            raise ValueError(f"arrays must have exactly the keys {sorted(expected)}")
        tensors = {key: torch.from_numpy(np.array(value)) for key, value in arrays.items()}
        return dataclasses.replace(self, **tensors)

    def to(self, device: torch.device | str) -> ConstrainedFamily:
        """A copy with all tensors on `device` (inputs must live where the data live)."""
        tensors = {key: getattr(self, key).to(device) for key in self._tensor_names()}
        return dataclasses.replace(self, **tensors)

    def _tensor_names(self) -> list[str]:
        """Names of the fields that hold tensors (the shared data)."""
        return [
            field.name
            for field in dataclasses.fields(self)
            if isinstance(getattr(self, field.name), Tensor)
        ]

    @abstractmethod
    def _problem_ineq(self, y: Tensor, x: Tensor) -> Tensor:
        """The problem's own inequality residuals [B, num_ineq] on checked inputs."""

    @abstractmethod
    def _problem_ineq_jacobian(self, y: Tensor, x: Tensor) -> Tensor:
        """d `_problem_ineq` / dy [B, num_ineq, num_vars] on checked inputs."""

    def _constraint_argument_slope(self, y: Tensor) -> Tensor:
        """d psi / dy, which is diagonal: ones, or cos(y) with sine constraints [B, num_vars]."""
        return torch.cos(y) if self.sine_constraints else torch.ones_like(y)

    def _constraint_argument(self, y: Tensor, x: Tensor) -> Tensor:
        """psi(y; x): y, or sin(y) - sin(A^+ x) + A^+ x with sine constraints (module docstring)."""
        if not self.sine_constraints:
            return y
        anchor = x @ self.A_pinv.T
        return torch.sin(y) - torch.sin(anchor) + anchor

    def _check_batch(self, y: Tensor, x: Tensor) -> None:
        """Shapes [B, num_vars] and [B, num_eq] with the same B, the data's dtype, finite."""
        self._check_tensor("y", y, self.num_vars, "num_vars")
        self._check_tensor("x", x, self.num_eq, "num_eq")
        if y.shape[0] != x.shape[0]:
            raise ValueError(
                f"y and x must have the same batch size B, got {y.shape[0]} and {x.shape[0]}"
            )

    def _check_tensor(self, label: str, value: Tensor, width: int, width_name: str) -> None:
        """One batched input: a finite tensor of shape [B, width] with the data's dtype/device."""
        if not isinstance(value, Tensor):
            raise TypeError(f"{label} must be a torch.Tensor, got {type(value).__name__}")
        if value.dim() != 2 or value.shape[1] != width:
            raise ValueError(
                f"{label} must have shape [B, {width_name}] = [B, {width}], "
                f"got {tuple(value.shape)}"
            )
        if value.dtype != self.A.dtype or value.device != self.A.device:
            raise ValueError(
                f"{label} must have dtype {self.A.dtype} on device {self.A.device} like the "
                f"family's data (see family.to), got {value.dtype} on {value.device}"
            )
        if not bool(torch.isfinite(value).all()):
            raise ValueError(f"{label} must be finite: it contains NaN or inf")
