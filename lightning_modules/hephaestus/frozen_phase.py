"""A frozen Hephaestus phase inside the next one (Forge in Morph, Morph in Refine).

Under LightningCLI the outer phase is built inside Lightning's "given hyperparameters" context
(a context variable holding the outer phase's config), and every `save_hyperparameters()` made
while it is set records those values: a Morph built inside Refine's `__init__` got Refine's
hyperparameters (no `num_test_samples`), so Refine's test failed under `train.py` only. The
inner phase is therefore built in an empty `contextvars.Context`, where it records its own.
"""

from __future__ import annotations

import contextvars
from typing import TypeVar

from lightning import LightningModule

from optiforge.lightning_modules.weights_file import read_state_dict

Phase = TypeVar("Phase", bound=LightningModule)


def load_frozen_phase(phase: type[Phase], field: str, weights: str | None, **sizes: int) -> Phase:
    """`phase(**sizes)` with its own hyperparameters, loaded from `weights` (state dict or
    Lightning checkpoint, checked to fit; None: untrained), frozen and in eval mode.

    `field` names the config field of `weights` in errors (e.g. "model.morph_weights")."""
    module = contextvars.Context().run(phase, **sizes)
    if weights is not None:
        module.load_state_dict(read_state_dict(field, weights, module))
    module.requires_grad_(False)
    return module.eval()
