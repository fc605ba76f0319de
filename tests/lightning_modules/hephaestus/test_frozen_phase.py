"""A phase built inside another keeps its own hyperparameters under LightningCLI's context, and
its weights file is refused, naming the field, when missing or of another phase."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from lightning.pytorch.core.mixins.hparams_mixin import _given_hyperparameters_context

from optiforge.lightning_modules.hephaestus.forge import Forge
from optiforge.lightning_modules.hephaestus.frozen_phase import load_frozen_phase
from optiforge.lightning_modules.hephaestus.morph import Morph
from optiforge.lightning_modules.hephaestus.refine import Refine

SIZES = {"forge_hidden": 8, "forge_layers": 1, "latent": 2, "components": 2, "hidden": 8}


def test_inner_morph_records_its_own_hparams_under_the_cli_context() -> None:
    """Refine built as LightningCLI builds it: its Morph has Morph's hparams, not Refine's."""
    given = {"_class_path": "optiforge.lightning_modules.Refine", "samples": 3, **SIZES}
    with _given_hyperparameters_context(hparams=given, instantiator="test"):
        refine = Refine(samples=3, **SIZES)
    assert refine.hparams.samples == 3
    assert refine.morph.hparams.num_test_samples == 16  # Morph's default
    assert "samples" not in refine.morph.hparams
    assert refine.morph.forge.hparams.hidden == SIZES["forge_hidden"]


def test_frozen_phase_loads_a_checkpoint_and_freezes(tmp_path: Path) -> None:
    """Weights saved from a Forge come back bit-equal, frozen and in eval mode."""
    source = Forge(hidden=8, num_layers=1)
    path = tmp_path / "forge.ckpt"
    torch.save({"state_dict": source.state_dict()}, path)
    loaded = load_frozen_phase(Forge, "model.forge_weights", str(path), hidden=8, num_layers=1)
    for name, value in source.state_dict().items():
        assert torch.equal(loaded.state_dict()[name], value), name
    assert not loaded.training
    assert not any(p.requires_grad for p in loaded.parameters())


def test_missing_or_foreign_weights_name_the_field(tmp_path: Path) -> None:
    """A missing morph checkpoint and a Forge checkpoint given as Morph weights both raise a
    ValueError naming model.morph_weights."""
    with pytest.raises(ValueError, match=r"^model\.morph_weights: no file at"):
        Refine(morph_weights=str(tmp_path / "none.ckpt"), **SIZES)
    forge = tmp_path / "forge.ckpt"
    torch.save({"state_dict": Forge(hidden=8, num_layers=1).state_dict()}, forge)
    with pytest.raises(ValueError, match=r"^model\.morph_weights: .* do not fit this Morph"):
        Refine(morph_weights=str(forge), **SIZES)
    with pytest.raises(ValueError, match=r"^model\.forge_weights: .*shape"):
        Morph(forge_weights=str(forge), forge_hidden=16, forge_layers=1)
