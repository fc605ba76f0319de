"""The conditional variance of an algorithm's population loss given its training loss, estimated
from retrainings, and the generalization bound it yields (Gastpar, Nachum, Shafer, Weinberger,
"Which Algorithms Have Tight Generalization Bounds?").

Setting of the paper: a distribution D is drawn from a collection (uniformly here), a training
set S ~ D^m, and an estimator E sees only S and must guess the population loss L_D(A(S)). The
best guess in mean square is E[L_D(A(S)) | S]; its mean square error is the conditional variance
V = E[Var(L_D(A(S)) | S)], and no estimator does better. So a tight bound exists exactly when V
is small: by Markov's inequality |E(S) - L_D(A(S))| <= sqrt(V / delta) with probability
>= 1 - delta, while for a loss in [0, 1] an estimator within eps with probability >= 1 - delta
has mean square error <= eps^2 + delta, so none exists when V > eps^2 + delta.

Here the estimator sees the training loss T = L_S(A(S)), the quantity every "training loss plus
gap" bound starts from, and E[L | T] is fitted by least squares on the retrainings (one line,
or a constant when T never varies, e.g. an interpolating algorithm). The residual variance
estimates V_T = E[Var(L | T)] >= V (conditioning on less of S leaves more variance): the
radius sqrt(V_T / delta) is attained by the fitted estimator, so it upper-bounds the paper's
sqrt(V / delta); next to sqrt(Var(L) / delta), the radius of a guess that ignores the run, it
says how much the training run tells about the population loss.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike


@dataclass(frozen=True)
class GeneralizationEstimate:
    """What K retrainings say about the algorithm's population loss L and training loss T.

    Attributes:
        retrainings: K, the number of (training loss, population loss) pairs.
        train_loss: mean of T over the retrainings.
        test_loss: mean of L (held-out loss, the stand-in for L_D) over the retrainings.
        gap: mean generalization gap L - T.
        gap_std: standard deviation of L - T across retrainings.
        variance: unconditional variance of L across retrainings (what an estimator that
            ignores the training run faces).
        conditional_variance: V_T, residual variance of L after the least-squares fit on T.
        delta: failure probability of the bound.
        bound: sqrt(V_T / delta), the radius of the bound L in fit(T) +- bound.
        uninformed_bound: sqrt(variance / delta), the radius of the guess mean(L) that ignores
            the training run.
        slope: slope of the fit of L on T (0 when T never varied).
        intercept: intercept of that fit.
    """

    retrainings: int
    train_loss: float
    test_loss: float
    gap: float
    gap_std: float
    variance: float
    conditional_variance: float
    delta: float
    bound: float
    uninformed_bound: float
    slope: float
    intercept: float


def estimate_generalization(
    train_losses: ArrayLike, test_losses: ArrayLike, delta: float = 0.1
) -> GeneralizationEstimate:
    """Fit L on T over the retrainings and turn the residual variance into the bound.

    Args:
        train_losses: T per retraining [K].
        test_losses: L per retraining [K], same order.
        delta: failure probability, in (0, 1).

    The residual variance divides by K - rank of the fit (unbiased for a linear E[L | T]); the
    fit drops the slope when T has no spread, so K >= 2 suffices then and K >= 3 otherwise.
    """
    train = np.asarray(train_losses, dtype=np.float64)
    test = np.asarray(test_losses, dtype=np.float64)
    if train.ndim != 1 or train.shape != test.shape:
        raise ValueError(
            f"train_losses and test_losses must be 1-d of one length, got {train.shape} "
            f"and {test.shape}"
        )
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    if not (np.isfinite(train).all() and np.isfinite(test).all()):
        raise ValueError("train_losses and test_losses must be finite")
    spread = bool(np.ptp(train) > 1e-12 * max(1.0, float(np.abs(train).max())))
    rank = 2 if spread else 1
    if len(train) <= rank:
        raise ValueError(
            f"retrainings: need more than {rank} to fit the test loss on the training loss, "
            f"got {len(train)}"
        )
    design = np.stack([np.ones_like(train), train], axis=1)[:, :rank]
    coefficients, *_ = np.linalg.lstsq(design, test, rcond=None)
    residuals = test - design @ coefficients
    conditional = float(residuals @ residuals) / (len(train) - rank)
    gaps = test - train
    return GeneralizationEstimate(
        retrainings=len(train),
        train_loss=float(train.mean()),
        test_loss=float(test.mean()),
        gap=float(gaps.mean()),
        gap_std=float(gaps.std(ddof=1)),
        variance=float(test.var(ddof=1)),
        conditional_variance=conditional,
        delta=delta,
        bound=math.sqrt(conditional / delta),
        uninformed_bound=math.sqrt(float(test.var(ddof=1)) / delta),
        slope=float(coefficients[1]) if spread else 0.0,
        intercept=float(coefficients[0]),
    )
