"""Every YAML under configs/ parses and survives one fast_dev_run fit."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.cli_helpers import PROJECT_ROOT, run_cli

CONFIGS = sorted((PROJECT_ROOT / "configs").rglob("*.yaml"))


# Per config folder: arguments that keep a fast_dev_run fast (FSNet's evaluation splits would
# otherwise solve 1280 reference instances before the first step).
FAST_DEV_OVERRIDES = {
    "fsnet": [
        *("--data.init_args.train_size", "16", "--data.init_args.val_size", "4"),
        *("--data.init_args.test_size", "4", "--data.init_args.batch_size", "8"),
        *("--data.init_args.cache_dir", "null"),
    ],
    "hephaestus": [
        *("--data.init_args.train_size", "4", "--data.init_args.val_size", "2"),
        *("--data.init_args.test_size", "2", "--data.init_args.batch_size", "2"),
    ],
}
# Configs that load the previous phase's weights: a clean clone has none, so the smoke run
# starts from untrained weights (the chain itself is tested in test_hephaestus_morph_refine).
WEIGHT_OVERRIDES = {
    "morph": ["--model.init_args.forge_weights", "null"],
    "refine": ["--model.init_args.morph_weights", "null"],
}


def config_id(path: Path) -> str:
    return str(path.relative_to(PROJECT_ROOT / "configs"))


def test_configs_are_discovered() -> None:
    """The discovery finds the default config (so an empty glob cannot pass silently)."""
    assert PROJECT_ROOT / "configs" / "default.yaml" in CONFIGS


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_config_prints(config: Path, capsys: pytest.CaptureFixture[str], in_tmp_dir: Path) -> None:
    """`--print_config` resolves the file to a full config with model and data class paths."""
    with pytest.raises(SystemExit) as exit_info:
        run_cli("fit", "--config", str(config), "--print_config")
    assert exit_info.value.code in (None, 0)
    resolved = yaml.safe_load(capsys.readouterr().out)
    assert resolved["model"]["class_path"]
    assert resolved["data"]["class_path"]


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_config_fast_dev_run(config: Path, in_tmp_dir: Path) -> None:
    """One training and one validation batch run and produce a finite training loss."""
    overrides = [
        *FAST_DEV_OVERRIDES.get(config.parent.name, []),
        *WEIGHT_OVERRIDES.get(config.name.split("_")[0], []),
    ]
    cli = run_cli("fit", "--config", str(config), "--trainer.fast_dev_run", "true", *overrides)
    assert cli.trainer.global_step == 1
    losses = [v for k, v in cli.trainer.callback_metrics.items() if k.startswith("train/loss")]
    assert losses and all(bool(v.isfinite()) for v in losses)
