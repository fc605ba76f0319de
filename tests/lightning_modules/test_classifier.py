"""The reference classifier's networks and argument checks."""

from __future__ import annotations

import pytest
import torch

from lightning_modules import Classifier


@pytest.mark.parametrize(
    ("architecture", "shape", "widths", "n_params"),
    [
        # conv 1->4: 4*9+4 = 40; conv 4->8: 8*36+8 = 296; head 8->3: 27  => 363
        ("cnn", (1, 8, 8), (4, 8), 363),
        # 18->5: 95; 5->2: 12  => 107
        ("mlp", (18,), (5,), 107),
    ],
)
def test_shapes_and_parameter_counts(
    architecture: str, shape: tuple[int, ...], widths: tuple[int, ...], n_params: int
) -> None:
    """Logits have shape [batch, classes]; parameter counts match the hand count."""
    classes = 3 if architecture == "cnn" else 2
    model = Classifier(shape, classes, architecture, widths)  # type: ignore[arg-type]
    assert model(torch.zeros(5, *shape)).shape == (5, classes)
    assert sum(p.numel() for p in model.parameters()) == n_params


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"num_classes": 1}, "model.num_classes"),
        ({"dropout": 1.0}, "model.dropout"),
        ({"widths": (0,)}, "model.widths"),
        ({"architecture": "rnn"}, "model.architecture"),
        ({"input_shape": (64,)}, "model.input_shape"),
    ],
)
def test_bad_arguments_name_the_field(kwargs: dict, field: str) -> None:
    """Invalid Classifier arguments raise a ValueError naming model.<field>."""
    with pytest.raises(ValueError, match=field):
        Classifier(**kwargs)
