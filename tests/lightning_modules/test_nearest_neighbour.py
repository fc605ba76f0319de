"""1-nearest-neighbour: memorizes its training set, predicts like brute force, and a
checkpoint restores the memory."""

from __future__ import annotations

from pathlib import Path

import lightning as L
import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from optiforge.lightning_modules import NearestNeighbour


def loader(x: torch.Tensor, y: torch.Tensor, batch_size: int = 7) -> DataLoader:
    return DataLoader(TensorDataset(x, y), batch_size=batch_size)


def test_fit_memorizes_and_predicts_like_brute_force(tmp_path: Path) -> None:
    """After one epoch the memory is the training set (in order), the training accuracy is 1,
    and a fresh module loaded from the checkpoint predicts test points like brute force."""
    generator = torch.Generator().manual_seed(0)
    x_train, y_train = torch.rand(30, 2, 3, generator=generator), torch.arange(30) % 4
    x_test, y_test = torch.rand(11, 2, 3, generator=generator), torch.arange(11) % 4
    model = NearestNeighbour(input_shape=(2, 3), num_classes=4)
    trainer = L.Trainer(
        max_epochs=1,
        logger=False,
        default_root_dir=tmp_path,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(model, loader(x_train, y_train), loader(x_test, y_test))
    assert torch.equal(model.memory_x, x_train.flatten(1))
    assert torch.equal(model.memory_y, y_train)
    assert trainer.callback_metrics["train/acc"] == 1.0
    assert trainer.callback_metrics["train/loss"] == 0.0

    nearest = torch.cdist(x_test.flatten(1), x_train.flatten(1)).argmin(dim=1)
    expected = (y_train[nearest] == y_test).float().mean()
    fresh = NearestNeighbour(input_shape=(2, 3), num_classes=4)
    checkpoint = trainer.checkpoint_callback.best_model_path
    tester = L.Trainer(logger=False, default_root_dir=tmp_path, enable_progress_bar=False)
    results = tester.test(fresh, loader(x_test, y_test), ckpt_path=checkpoint)
    assert results[0]["test/acc"] == pytest.approx(float(expected))
    assert torch.equal(fresh.memory_y, y_train)


def test_conflicting_duplicates_cost_training_accuracy() -> None:
    """Two equal inputs with different labels: the first stored wins, so one is misclassified."""
    model = NearestNeighbour(input_shape=(2,), num_classes=2)
    model.memory_x = torch.tensor([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    model.memory_y = torch.tensor([0, 1, 1])
    assert torch.equal(model(model.memory_x), torch.tensor([0, 0, 1]))


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"num_classes": 1}, "model.num_classes"), ({"input_shape": (0, 3)}, "model.input_shape")],
)
def test_bad_arguments_name_the_field(kwargs: dict[str, object], field: str) -> None:
    """Fewer than two classes or an empty input shape raise naming the field."""
    with pytest.raises(ValueError, match=field):
        NearestNeighbour(**kwargs)
