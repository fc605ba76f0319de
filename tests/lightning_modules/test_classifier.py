"""The reference classifier's networks and argument checks."""

from __future__ import annotations

import pytest
import torch

from optiforge.lightning_modules import Classifier


@pytest.mark.parametrize(
    ("architecture", "shape", "widths", "n_params"),
    [
        # conv 1->4: 4*9+4 = 40; conv 4->8: 8*36+8 = 296; head 8->3: 27  => 363
        ("cnn", (1, 8, 8), (4, 8), 363),
        # 18->5: 95; 5->2: 12  => 107
        ("mlp", (18,), (5,), 107),
        # tokens 8->4: 36, positions 8x4: 32; one pre-norm layer: attention in 3*16+12 = 60,
        # out 20, feed-forward 4->8->4: 40 + 36, two norms 16; final norm 8; head 4->3: 15
        ("transformer", (1, 8, 8), (4,), 263),
        # 18 feature tokens 1->4: 8, positions 72; the same layer 172; norm 8; head 4->2: 10
        ("transformer", (18,), (4,), 270),
    ],
)
def test_shapes_and_parameter_counts(
    architecture: str, shape: tuple[int, ...], widths: tuple[int, ...], n_params: int
) -> None:
    """Logits have shape [batch, classes]; parameter counts match the hand count."""
    classes = 3 if len(shape) == 3 else 2
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
        ({"architecture": "transformer", "widths": (8, 16)}, "model.widths"),
    ],
)
def test_bad_arguments_name_the_field(kwargs: dict, field: str) -> None:
    """Invalid Classifier arguments raise a ValueError naming model.<field>."""
    with pytest.raises(ValueError, match=field):
        Classifier(**kwargs)


def test_transformer_reads_image_rows_in_order() -> None:
    """Rows are tokens with learned positions: swapping two rows of an image changes the
    logits, while the untouched image gives the same logits batched or alone."""
    torch.manual_seed(0)
    model = Classifier((1, 8, 8), 10, "transformer", (16, 16)).eval()
    images = torch.rand(3, 1, 8, 8)
    swapped = images.clone()
    swapped[:, :, [0, 5]] = images[:, :, [5, 0]]
    with torch.no_grad():
        logits, alone = model(images), model(images[1:2])
        assert not torch.allclose(logits, model(swapped), atol=1e-4)
    assert torch.allclose(logits[1:2], alone, atol=1e-6)
