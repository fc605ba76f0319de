"""Replicable testers of uniformity, closeness and independence of discrete distributions
(Diakonikolas, Gao, Kane, Liu, Ye: "Replicable Distribution Testing")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.algorithms.replicable_testing.sample_size import (
        closeness_samples,
        independence_samples,
        uniformity_samples,
    )
    from optiforge.algorithms.replicable_testing.shared_randomness import (
        FIXED_THRESHOLD,
        draw_threshold,
        draw_uniform_reference,
    )
    from optiforge.algorithms.replicable_testing.statistics import closeness_statistic
    from optiforge.algorithms.replicable_testing.testers import (
        Decision,
        closeness_test,
        independence_test,
        uniformity_test,
    )

__all__ = [
    "FIXED_THRESHOLD",
    "Decision",
    "closeness_samples",
    "closeness_statistic",
    "closeness_test",
    "draw_threshold",
    "draw_uniform_reference",
    "independence_samples",
    "independence_test",
    "uniformity_samples",
    "uniformity_test",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optiforge.algorithms.replicable_testing.sample_size": (
            "closeness_samples",
            "independence_samples",
            "uniformity_samples",
        ),
        "optiforge.algorithms.replicable_testing.shared_randomness": (
            "FIXED_THRESHOLD",
            "draw_threshold",
            "draw_uniform_reference",
        ),
        "optiforge.algorithms.replicable_testing.statistics": ("closeness_statistic",),
        "optiforge.algorithms.replicable_testing.testers": (
            "Decision",
            "closeness_test",
            "independence_test",
            "uniformity_test",
        ),
    },
)
