"""optiforge's command line: `python train.py [fit|validate|test|predict] --config <yaml> ...`.

With no arguments it runs `fit` (and then `test`) with `configs/default.yaml`. Every
LightningModule and LightningDataModule (the project's or the user's) is selectable by
`class_path`; optimizers and LR schedulers too (`--optimizer optimizers.SAM`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from lightning.pytorch.cli import LightningArgumentParser, LightningCLI
from lightning.pytorch.utilities import rank_zero_info
from lightning.pytorch.utilities.model_helpers import is_overridden

from callbacks import FitSummary, LatestCheckpoint, LoggerSaveConfigCallback, SharpnessGuard

DEFAULT_CONFIG = Path(__file__).resolve().parent / "configs" / "default.yaml"
NON_NEGATIVE_OPTIMIZER_ARGS = ("lr", "weight_decay", "momentum", "eps", "rho")


class OptiforgeCLI(LightningCLI):
    """LightningCLI in subclass mode with W&B as the default logger and one forced
    `LatestCheckpoint` (group `checkpoint`, `save_last` on) so that `last.ckpt` always exists
    and always holds the latest state of the run (resume continues where it stopped)."""

    def __init__(self, args: list[str] | None = None, run: bool = True) -> None:
        super().__init__(
            model_class=None,
            datamodule_class=None,
            subclass_mode_model=True,
            subclass_mode_data=True,
            save_config_callback=LoggerSaveConfigCallback,
            trainer_defaults={
                "logger": {"class_path": "callbacks.OptiforgeWandbLogger"},
                "callbacks": [FitSummary(), SharpnessGuard()],
            },
            seed_everything_default=0,
            args=args,
            run=run,
        )

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        parser.add_lightning_class_args(LatestCheckpoint, "checkpoint")
        parser.set_defaults({"checkpoint.save_last": True})
        parser.add_argument(
            "--test_after_fit",
            type=bool,
            default=True,
            help="fit only: test the best checkpoint when fit ends (if the data has a test split)",
        )

    def instantiate_classes(self) -> None:
        """Instantiate; a bad value becomes a one-line parser error before anything is written."""
        parser = self._parser(self.subcommand)
        self._check_optimizer_args(parser)
        try:
            super().instantiate_classes()
        except (ValueError, TypeError) as error:
            parser.error(str(error))

    def _check_optimizer_args(self, parser: LightningArgumentParser) -> None:
        """Fail on a negative lr (and the like) with the field's full key, for any optimizer."""
        optimizer = self._get(self.config, "optimizer")
        init_args: dict[str, Any] = dict(getattr(optimizer, "init_args", None) or {})
        for name in NON_NEGATIVE_OPTIMIZER_ARGS:
            value = init_args.get(name)
            if isinstance(value, (int, float)) and value < 0:
                parser.error(f"optimizer.init_args.{name} must be >= 0, got {value}")

    def after_fit(self) -> None:
        """Test the best checkpoint (else the final weights) and print the test metrics."""
        if not self._get(self.config, "test_after_fit") or self.trainer.fast_dev_run:
            return
        if self.datamodule is None or not is_overridden("test_dataloader", self.datamodule):
            return
        if not is_overridden("test_step", self.model):
            return
        checkpoint = self.trainer.checkpoint_callback
        ckpt_path = "best" if checkpoint is not None and checkpoint.best_model_path else None
        results = self.trainer.test(self.model, datamodule=self.datamodule, ckpt_path=ckpt_path)
        for name, value in (results[0] if results else {}).items():
            rank_zero_info(f"{name} = {value:.4f}")


def main(args: list[str] | None = None) -> OptiforgeCLI:
    """Run the CLI; no arguments at all means `fit --config configs/default.yaml`."""
    if args is None and sys.argv[1:]:
        return OptiforgeCLI()  # LightningCLI reads sys.argv itself
    return OptiforgeCLI(args=args or ["fit", "--config", str(DEFAULT_CONFIG)])


if __name__ == "__main__":
    main()
