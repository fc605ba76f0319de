"""Generalization diagnostic of any training config: the conditional variance of the
algorithm's loss, estimated by retraining through `train.py` on resampled training sets, and
the bound it gives (Gastpar, Nachum, Shafer, Weinberger)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.algorithms.generalization.config_check import check_config
    from optiforge.algorithms.generalization.diagnostic import Diagnosis, diagnose
    from optiforge.algorithms.generalization.estimate import (
        GeneralizationEstimate,
        estimate_generalization,
    )
    from optiforge.algorithms.generalization.retraining import (
        Distributions,
        Retraining,
        run_retrainings,
    )

__all__ = [
    "Diagnosis",
    "Distributions",
    "GeneralizationEstimate",
    "Retraining",
    "check_config",
    "diagnose",
    "estimate_generalization",
    "run_retrainings",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optiforge.algorithms.generalization.config_check": ("check_config",),
        "optiforge.algorithms.generalization.diagnostic": ("Diagnosis", "diagnose"),
        "optiforge.algorithms.generalization.estimate": (
            "GeneralizationEstimate",
            "estimate_generalization",
        ),
        "optiforge.algorithms.generalization.retraining": (
            "Distributions",
            "Retraining",
            "run_retrainings",
        ),
    },
)
