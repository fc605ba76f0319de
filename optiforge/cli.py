"""optiforge's command line: `optiforge [fit|validate|test|predict] --config <yaml> ...`
(`python train.py ...` in a clone is the same).

With no arguments it runs `fit` (and then `test`) with `configs/default.yaml`, and any call
without a `--config` starts from that file; packaged configs are found from any folder
(`optiforge.cli_args`). Every
LightningModule and LightningDataModule (the project's or the user's) is selectable by
`class_path`; optimizers and LR schedulers too (`--optimizer optiforge.optimizers.SAM`).

User mistakes end before anything is written (no logger run, no checkpoint folder), in ONE
line on stderr naming the field, with exit status 2 (like argparse). The mechanism, for any
module or data module:
- a constructor checks its own inputs (values, data files, weights files and their kind) and
  raises `ValueError("<field>: <what is wrong, the value, what is allowed>")`, where <field> is
  the option as the user writes it (`data.path`, `model.morph_weights`);
  `optiforge.lightning_modules.weights_file.read_state_dict` does this for weights files;
- the CLI instantiates model and data before anything writes (the logger starts its run on
  first use) and turns such a ValueError / TypeError, or a Lightning misconfiguration of the
  trainer, into that one line (`OptiforgeArgumentParser.error`);
- `--ckpt_path` is checked here: the file exists, is a Lightning checkpoint, and its weights
  fit the configured module. `fit --ckpt_path` continues the checkpoint's W&B run;
- option names are matched exactly (`--trainer.max_epoch` is refused with the nearest valid
  name, not taken for `max_epochs`), and a missing `--config` file is named.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import logging
import re
import sys
import warnings
from pathlib import Path
from typing import Any, NoReturn

from lightning.fabric.utilities.exceptions import MisconfigurationException
from lightning.pytorch import Trainer
from lightning.pytorch.cli import LightningArgumentParser, LightningCLI
from lightning.pytorch.utilities import rank_zero_info
from lightning.pytorch.utilities.model_helpers import is_overridden

from optiforge.callbacks.fit_summary import FitSummary
from optiforge.callbacks.latest_checkpoint import LatestCheckpoint
from optiforge.callbacks.model_summary import CompactModelSummary
from optiforge.callbacks.optimizer_adapter import OptimizerAdapter
from optiforge.callbacks.save_config import LoggerSaveConfigCallback
from optiforge.callbacks.wandb_run_id import WandbRunId, checkpoint_run_id
from optiforge.cli_args import MissingConfig, prepare

WANDB_LOGGER = "optiforge.callbacks.wandb_logger.OptiforgeWandbLogger"
# Signs torch does not check: a negative lr ascends; a scheduler divides by step_size / T_max /
# T_0, and a negative gamma / factor flips the rate's sign (step_size -1 raised it every epoch).
SIGN_CHECKS = {">= 0": lambda value: value >= 0, "> 0": lambda value: value > 0}
SIGN_RULES = {
    "trainer": {"check_val_every_n_epoch": "> 0"},  # Lightning divides by it
    "optimizer": dict.fromkeys(("lr", "weight_decay", "momentum", "eps", "rho"), ">= 0"),
    "lr_scheduler": {
        **dict.fromkeys(("eta_min", "min_lr", "patience", "cooldown", "threshold"), ">= 0"),
        **dict.fromkeys(("step_size", "T_max", "T_0", "T_mult", "gamma", "factor"), "> 0"),
    },
}
CKPT_KEYWORDS = ("best", "last", "hpc")
# Messages that never concern the user's run: a deprecation inside Lightning / torch_geometric,
# Lightning's advertising tips, and the seed line (the seed is in the saved config).
# Also two lines that say nothing about a run of this CLI: `--optimizer` replacing a module's
# own configure_optimizers is what the option means, and the project's iterable datasets draw
# per (seed, epoch, rank) in the main process, where `__len__` is exact.
IGNORED_WARNINGS = (
    (r"`isinstance\(treespec, LeafSpec\)` is deprecated", FutureWarning),
    (r"`torch\.jit\.script` is deprecated", DeprecationWarning),
    (r"`\w+\.configure_optimizers` will be overridden by", UserWarning),
    (r"Your `IterableDataset` has `__len__` defined", UserWarning),
)
IGNORED_LOG_PREFIXES = ("💡 Tip:", "Seed set to", "[rank: 0] Seed set to")
# CompactModelSummary replaces Lightning's default summary on purpose: no need to say so.
IGNORED_LOG_PREFIXES += ("Trainer already configured with model summary callbacks",)
IGNORED_LOGGERS = ("lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.seed")
USER_ERRORS = (ValueError, TypeError, MisconfigurationException)


class KnownNoiseFilter(logging.Filter):
    """Drops the log records listed in IGNORED_LOG_PREFIXES."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(IGNORED_LOG_PREFIXES)


def silence_known_noise() -> None:
    """Filter, narrowly by message and category, what every command printed needlessly."""
    for message, category in IGNORED_WARNINGS:
        warnings.filterwarnings("ignore", message=message, category=category)
    for name in IGNORED_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, KnownNoiseFilter) for f in logger.filters):
            logger.addFilter(KnownNoiseFilter())


def one_line(message: str) -> str:
    """A jsonargparse error (nested "Parser key" blocks, union alternatives) as one line:
    the dotted key, then the reasons, without the alternatives that do not apply."""
    key = ".".join(re.findall(r'Parser key "([^"]+)"', message))
    skip = ("Parser key", "Does not validate", "Subtypes:", "Errors:", "Given value type:")
    skip += ("Expected a <class 'NoneType'>", "Problem with given class_path")
    lines = [line.strip().removeprefix("- ") for line in message.splitlines()]
    reasons = [line for line in lines if line and not line.startswith(skip)]
    # "Given value: abc" helps; "Given value: Namespace(...)" repeats the whole config
    reasons = [r for r in reasons if not (r.startswith("Given value:") and "(" in r)]
    text = "; ".join(reasons)
    return f"{key}: {text}" if key and not text.startswith(key) else text


def user_error_message(error: BaseException) -> str:
    """The innermost user error of a chain (jsonargparse wraps a constructor's ValueError);
    Lightning's `max_epochs` and the like become `trainer.max_epochs`."""
    inner = error
    while isinstance(inner.__cause__ or inner.__context__, USER_ERRORS):
        inner = inner.__cause__ or inner.__context__
    message = str(inner)
    if isinstance(inner, MisconfigurationException):
        trainer_args = inspect.signature(Trainer.__init__).parameters
        message = re.sub(
            r"`(\w+)`", lambda m: f"trainer.{m[1]}" if m[1] in trainer_args else m[0], message
        )
    return one_line(message)


def resolve_class(class_path: str) -> object:
    """The object a dotted `class_path` names (None if it cannot be imported)."""
    module, _, name = class_path.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None


def lr_bound(class_path: str, default: str) -> str:
    """ "> 0" for an optimizer class that refuses lr = 0 (tried on one throwaway parameter with
    its other defaults), else `default`: the bound the error message states is the real one."""
    import torch

    cls = resolve_class(class_path)
    if not isinstance(cls, type):
        return default
    try:
        cls([torch.zeros(1, requires_grad=True)], lr=0.0)
    except ValueError:
        return "> 0"
    except Exception:  # needs more arguments (a base optimizer, ...): no verdict
        return default
    return default


def is_wandb_logger_without_id(logger: Any) -> bool:
    """True for the config of an `OptiforgeWandbLogger` that names no run id."""
    init_args = getattr(logger, "init_args", None)
    class_path = str(getattr(logger, "class_path", ""))
    return (
        init_args is not None
        and class_path.endswith("OptiforgeWandbLogger")
        and (init_args.get("id") is None)
    )


def nearest_option(message: str, options: list[str]) -> str:
    """ " (did you mean --x?)" for the first unrecognized `--option` of an argparse message that
    is close to a valid one, else ""."""
    given = re.findall(r"(--[\w.]+)", re.split("unrecognized arguments:", message, flags=re.I)[-1])
    for option in given:
        close = difflib.get_close_matches(option, options, n=1, cutoff=0.75)
        if close:
            return f" (did you mean {close[0]}?)"
    return ""


def wrapped_option_hint(message: str) -> str:
    """For an option a wrapper optimizer (SAM & co.) does not take but its base optimizer does,
    the option to use instead (`--optimizer.base_optimizer.lr`), else ""."""
    found = re.search(r"class_path '([\w.]+)'.*?Option '(\w+)' is not accepted", message, re.S)
    if found is None:
        found = re.search(r"^(optimizer): Option '(\w+)' is not accepted", message)
        if found is None:
            return ""
    cls = resolve_class(found[1]) if found[1] != "optimizer" else None
    if cls is not None and "base_optimizer" not in inspect.signature(cls).parameters:
        return ""
    option = found[2]
    return f" (a wrapper optimizer takes it as --optimizer.base_optimizer.{option})"


class OptiforgeArgumentParser(LightningArgumentParser):
    """Prints a user error as one line, `<prog> <command>: error: <message>`, exit status 2.
    Options are matched exactly: an abbreviation is refused with the nearest valid name."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str, ex: Exception | None = None) -> NoReturn:
        if not self.exit_on_error:
            super().error(message, ex)
        prog = self.prog.replace(" [options]", "")
        hint = nearest_option(message, self.known_options()) + wrapped_option_hint(message)
        sys.stderr.write(f"{prog}: error: {one_line(message)}{hint}\n")
        sys.exit(2)

    def known_options(self) -> list[str]:
        """Every `--option` of this parser and of its subcommands' parsers."""
        options = [o for o in self._option_string_actions if o.startswith("--")]
        subcommands = getattr(self, "_subcommands_action", None)
        for parser in getattr(subcommands, "_name_parser_map", {}).values():
            options += [o for o in parser._option_string_actions if o.startswith("--")]
        return options


class OptiforgeCLI(LightningCLI):
    """LightningCLI in subclass mode with W&B as the default logger and one forced
    `LatestCheckpoint` (group `checkpoint`, `save_last` on) so that `last.ckpt` always exists
    and always holds the latest state of the run (resume continues where it stopped)."""

    def __init__(self, args: list[str] | None = None, run: bool = True) -> None:
        silence_known_noise()
        self.checkpoint: dict[str, Any] | None = None
        super().__init__(
            model_class=None,
            datamodule_class=None,
            subclass_mode_model=True,
            subclass_mode_data=True,
            save_config_callback=LoggerSaveConfigCallback,
            parser_class=OptiforgeArgumentParser,
            trainer_defaults={
                "logger": {"class_path": WANDB_LOGGER},
                "callbacks": [
                    FitSummary(),
                    OptimizerAdapter(),
                    WandbRunId(),
                    CompactModelSummary(),
                ],
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

    def parse_arguments(self, parser: LightningArgumentParser, args: Any) -> None:
        """Parse, then check values and `--ckpt_path` before Lightning reads the checkpoint's
        hyperparameters into the config; a resumed fit continues the checkpoint's W&B run."""
        super().parse_arguments(parser, args)
        subcommand = self.config.get("subcommand")
        config = self.config[subcommand] if subcommand else self.config
        parser = self._parser(subcommand)
        for group, rules in SIGN_RULES.items():
            values = config.get(group)
            prefix = f"{group}." if group == "trainer" else f"{group}.init_args."
            values = values if group == "trainer" else getattr(values, "init_args", None)
            for name, allowed in rules.items():
                value = dict(values or {}).get(name)
                if group == "optimizer" and name == "lr" and isinstance(value, (int, float)):
                    allowed = lr_bound(getattr(config.get(group), "class_path", ""), allowed)
                if isinstance(value, (int, float)) and not SIGN_CHECKS[allowed](value):
                    parser.error(f"{prefix}{name} must be {allowed}, got {value}")
        ckpt_path = config.get("ckpt_path")
        if ckpt_path is None or ckpt_path in CKPT_KEYWORDS or "://" in str(ckpt_path):
            return
        self.checkpoint = self._read_checkpoint(parser, ckpt_path, config.get("model"))
        logger = config.trainer.logger
        if subcommand == "fit" and is_wandb_logger_without_id(logger):
            logger.init_args.id = checkpoint_run_id(self.checkpoint)

    @staticmethod
    def _read_checkpoint(
        parser: LightningArgumentParser, ckpt_path: str, model: Any
    ) -> dict[str, Any]:
        """The checkpoint at `ckpt_path`, refused unless it is a Lightning checkpoint of the
        configured model class (when the checkpoint records its class)."""
        from optiforge.lightning_modules.weights_file import checkpoint_class, load_weights_file

        try:
            checkpoint = load_weights_file("ckpt_path", ckpt_path, "a Lightning checkpoint")
        except ValueError as error:
            parser.error(str(error))
        if "pytorch-lightning_version" not in checkpoint or "state_dict" not in checkpoint:
            parser.error(f"ckpt_path: {ckpt_path!r} is not a Lightning checkpoint")
        source, configured = checkpoint_class(checkpoint), getattr(model, "class_path", None)
        if source and configured and resolve_class(source) is not resolve_class(configured):
            parser.error(
                f"ckpt_path: {ckpt_path!r} is a checkpoint of {source}, the model is {configured}"
            )
        return checkpoint

    def instantiate_classes(self) -> None:
        """Instantiate; a bad value becomes a one-line parser error before anything is written."""
        parser = self._parser(self.subcommand)
        try:
            super().instantiate_classes()
        except USER_ERRORS as error:
            parser.error(user_error_message(error))

    def instantiate_trainer(self, **kwargs: Any) -> Trainer:
        """Refuse a `--ckpt_path` whose weights do not fit the model, then build the trainer
        (called once model and data exist; the trainer prints, so the check comes first)."""
        checkpoint, self.checkpoint = self.checkpoint, None  # not kept through training
        if checkpoint is not None and not is_overridden("configure_model", self.model):
            from optiforge.lightning_modules.weights_file import weights_mismatch

            mismatch = weights_mismatch(checkpoint["state_dict"], self.model)
            if mismatch is not None and getattr(self.model, "strict_loading", True):
                self._parser(self.subcommand).error(
                    f"ckpt_path: the checkpoint's weights do not fit this "
                    f"{type(self.model).__name__} ({mismatch})"
                )
        return super().instantiate_trainer(**kwargs)

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
    """Run the CLI on `args` (default: the command line) as `cli_args.prepare` reads them: no
    arguments at all is `fit --config configs/default.yaml`, no `--config` starts from it."""
    from_command_line = args is None
    try:
        prepared = prepare(list(sys.argv[1:] if from_command_line else args))
    except MissingConfig as error:
        subcommand = next((a for a in (args or sys.argv[1:]) if not a.startswith("-")), "")
        sys.stderr.write(
            f"{Path(sys.argv[0]).name} {subcommand}: error: {error}\n".replace(" :", ":")
        )
        sys.exit(2)
    if from_command_line:
        sys.argv[1:] = prepared  # LightningCLI reads sys.argv itself
        cli = OptiforgeCLI()
        finish_wandb_run()
        return cli
    return OptiforgeCLI(args=prepared)


def finish_wandb_run() -> None:
    """Close the W&B run this process started, so that its closing lines (the `wandb sync`
    hint) are printed now, as plain text when redirected; W&B's exit hook colours them even in
    a file."""
    wandb = sys.modules.get("wandb")
    if wandb is not None and wandb.run is not None:
        wandb.run.finish()


def console_main() -> None:
    """The `optiforge` command (`pip install` puts it on the PATH): `main` on the command line."""
    main()


if __name__ == "__main__":
    main()
