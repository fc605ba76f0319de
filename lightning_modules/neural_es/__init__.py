"""Neural-ES (Lu et al., NeurIPS 2025): Pareto set learning for black-box multi-objective
problems with a network-parametrised, block-wise Gaussian search distribution."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.lightning_modules.neural_es.es_step import neural_es_step
    from optiforge.lightning_modules.neural_es.model import ParetoSetModel
    from optiforge.lightning_modules.neural_es.module import NeuralES
    from optiforge.lightning_modules.neural_es.surrogate import (
        natural_gradient_surrogate,
        rank_weights,
    )

__all__ = [
    "NeuralES",
    "ParetoSetModel",
    "natural_gradient_surrogate",
    "neural_es_step",
    "rank_weights",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optiforge.lightning_modules.neural_es.es_step": ("neural_es_step",),
        "optiforge.lightning_modules.neural_es.model": ("ParetoSetModel",),
        "optiforge.lightning_modules.neural_es.module": ("NeuralES",),
        "optiforge.lightning_modules.neural_es.surrogate": (
            "natural_gradient_surrogate",
            "rank_weights",
        ),
    },
)
