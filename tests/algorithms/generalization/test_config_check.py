"""Configs that cannot be diagnosed fail by name before any run starts."""

from __future__ import annotations

from pathlib import Path

import lightning as L
import pytest
import yaml

from optiforge.algorithms.generalization import check_config
from tests.cli_helpers import CONFIG_DIR, layered

BASE = CONFIG_DIR / "generalization" / "base.yaml"
NEAREST_NEIGHBOUR = CONFIG_DIR / "generalization" / "digits_1nn.yaml"


class NoTestStep(L.LightningModule):
    """A module that trains but never tests."""

    def training_step(self, batch: object, batch_idx: int) -> None:
        return None


def with_changes(tmp_path: Path, **changes: object) -> Path:
    """The 1-NN demo config with top-level keys replaced, written to tmp_path."""
    config = layered(BASE, NEAREST_NEIGHBOUR)
    config.update(changes)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_demo_configs_pass() -> None:
    """Both demo configs can be diagnosed; layered files merge key by key."""
    for name in ("digits_1nn", "digits_logreg_l2"):
        config = check_config([BASE, CONFIG_DIR / "generalization" / f"{name}.yaml"], "acc")
        assert config["data"]["class_path"] == "optiforge.datamodules.DigitsDataModule"


def test_unknown_config_file_is_named(tmp_path: Path) -> None:
    """A missing file is named with the option."""
    with pytest.raises(ValueError, match=r"^config: no such file .*missing\.yaml"):
        check_config([tmp_path / "missing.yaml"], "acc")


def test_model_without_test_step_has_no_test_metric(tmp_path: Path) -> None:
    """A model class without test_step fails naming model.class_path and the metric."""
    model = {"class_path": f"{__name__}.NoTestStep"}
    with pytest.raises(ValueError, match=r"^model.class_path: NoTestStep has no test_step.*acc"):
        check_config([with_changes(tmp_path, model=model)], "acc")


def test_test_after_fit_false_has_no_test_metric(tmp_path: Path) -> None:
    """A config that switches the test off fails naming test_after_fit."""
    with pytest.raises(ValueError, match=r"^test_after_fit: .*test/acc"):
        check_config([with_changes(tmp_path, test_after_fit=False)], "acc")


def test_data_without_resample_seed_is_named(tmp_path: Path) -> None:
    """A data module that cannot resample its training set fails naming data.class_path."""
    data = {"class_path": "optiforge.datamodules.CompasDataModule"}
    with pytest.raises(ValueError, match=r"^data.class_path: .*train_resample_seed"):
        check_config([with_changes(tmp_path, data=data)], "acc")


def test_unimportable_class_is_named(tmp_path: Path) -> None:
    """A class_path that does not import fails naming the field."""
    with pytest.raises(ValueError, match=r"^model.class_path: cannot import"):
        check_config([with_changes(tmp_path, model={"class_path": "nowhere.Model"})], "acc")
