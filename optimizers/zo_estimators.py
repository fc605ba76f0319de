"""The four telescoping constructions of an unbiased directional derivative (Ma & Huang 2025).

With D_n = (f(x + mu_n v) - f(x)) / mu_n, the directional derivative is the telescoping series
    grad_v f(x) = D_1 + sum_n (D_{n+1} - D_n),
and sampling N ~ p gives the unbiased P = D_1 + (D_{N+1} - D_N) / p_N (P4: 4 evaluations).
P3, P2 and P1 split P into 2, 3 and 4 groups, draw one group U uniformly and scale it by the
number of groups: P3 keeps D_1 (2 evaluations) or the telescoping term (3); P2 keeps one
difference quotient (D_1, D_{N+1}/p_N or -D_N/p_N; 2 evaluations); P1 keeps one function value
(1 evaluation). Every estimate is a linear combination sum_i c_i f(x + t_i v) of function
values along v, returned as (t_i, c_i) pairs, so an optimizer evaluates exactly the points used.

P2 and P1 separate D_{N+1}/p_N from D_N/p_N (and f / mu from f(x)); each alone is of order
1/p_N, so E|P| = sum_n |D_n| diverges: their mean exists only as the series summed over N
first (`expected_terms`), and Monte-Carlo averages do not settle. P4 and P3 have finite variance.
"""

from __future__ import annotations

from collections import defaultdict

import torch

from optiforge.optimizers.zo_schedules import Schedule

Terms = list[tuple[float, float]]
CONSTRUCTIONS = {"P4": 1, "P3": 2, "P2": 3, "P1": 4}


def _merged(terms: Terms) -> Terms:
    """Coefficients of equal offsets summed (one function value per point)."""
    total: dict[float, float] = defaultdict(float)
    for offset, coefficient in terms:
        total[offset] += coefficient
    return sorted(total.items())


def _quotient(mu: float, weight: float) -> Terms:
    """weight * (f(x + mu v) - f(x)) / mu."""
    return [(mu, weight / mu), (0.0, -weight / mu)]


def groups(construction: str, schedule: Schedule, n: int) -> list[Terms]:
    """The groups of `construction` given N = n; P = len(groups) * one group drawn uniformly."""
    if construction not in CONSTRUCTIONS:
        raise ValueError(f"construction must be one of {list(CONSTRUCTIONS)}, got {construction!r}")
    p = schedule.prob(n)
    first = _quotient(schedule.mu(1), 1.0)
    upper, lower = _quotient(schedule.mu(n + 1), 1.0 / p), _quotient(schedule.mu(n), -1.0 / p)
    if construction == "P4":
        return [_merged(first + upper + lower)]
    if construction == "P3":
        return [first, _merged(upper + lower)]
    if construction == "P2":
        return [first, upper, lower]
    return [[term] for term in _merged(first + upper + lower)]


def sample_terms(construction: str, schedule: Schedule, generator: torch.Generator) -> Terms:
    """One draw of (N, U): the (offset, coefficient) pairs of P, zero offset first."""
    options = groups(construction, schedule, schedule.sample(generator))
    pick = int(torch.randint(len(options), (), generator=generator)) if len(options) > 1 else 0
    scale = float(len(options))
    return sorted((offset, scale * coefficient) for offset, coefficient in options[pick])


def expected_terms(construction: str, schedule: Schedule, n_max: int) -> Terms:
    """E[P] over U, with N's sum cut at n_max, as (offset, coefficient) pairs: summed over N
    first this is D_1 + sum_{n <= n_max} (D_{n+1} - D_n) = D_{n_max + 1} for every construction.
    """
    first = _quotient(schedule.mu(1), 1.0)
    terms: Terms = list(first)
    for n in range(1, n_max + 1):
        p = schedule.prob(n)
        branches = groups(construction, schedule, n)  # E_U[P | N = n] = sum of the groups
        terms += [(t, p * c) for branch in branches for t, c in branch]
        terms += [(t, -p * c) for t, c in first]
    return _merged(terms)


def evaluations(terms: Terms) -> int:
    """Function evaluations the terms need (distinct points)."""
    return len({offset for offset, _ in terms})
