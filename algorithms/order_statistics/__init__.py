"""Extreme order statistics of finite-mean heavy-tailed distributions: exact integrals, Monte
Carlo to n = 10^7 and beyond, closed forms (Correa, Mallmann-Trenn and Romero)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.algorithms.order_statistics.closed_forms import (
        exponential_expected,
        pareto_expected,
    )
    from optiforge.algorithms.order_statistics.exact import expected_order_statistic
    from optiforge.algorithms.order_statistics.families import (
        Exponential,
        NearExtremal,
        Pareto,
        TailFamily,
    )
    from optiforge.algorithms.order_statistics.monte_carlo import (
        TopSummary,
        sample_top,
        summarize_top,
    )

__all__ = [
    "Exponential",
    "NearExtremal",
    "Pareto",
    "TailFamily",
    "TopSummary",
    "expected_order_statistic",
    "exponential_expected",
    "pareto_expected",
    "sample_top",
    "summarize_top",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optiforge.algorithms.order_statistics.closed_forms": (
            "exponential_expected",
            "pareto_expected",
        ),
        "optiforge.algorithms.order_statistics.exact": ("expected_order_statistic",),
        "optiforge.algorithms.order_statistics.families": (
            "Exponential",
            "NearExtremal",
            "Pareto",
            "TailFamily",
        ),
        "optiforge.algorithms.order_statistics.monte_carlo": (
            "TopSummary",
            "sample_top",
            "summarize_top",
        ),
    },
)
