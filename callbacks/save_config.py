"""Record the resolved CLI config and the git commit with whatever logger the run uses."""

from __future__ import annotations

import subprocess
from pathlib import Path

import lightning as L
from jsonargparse import Namespace
from lightning.pytorch.cli import LightningArgumentParser, SaveConfigCallback
from lightning.pytorch.loggers import WandbLogger
from typing_extensions import override


def git_commit(directory: str | Path = ".") -> str:
    """HEAD commit of the repository holding `directory` ("+dirty" if tracked files changed),
    or "unknown" outside a git checkout."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=directory, capture_output=True, text=True, check=True
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=directory,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+dirty" if status else "")


class LoggerSaveConfigCallback(SaveConfigCallback):
    """Writes the resolved config into the run's own directory and logs it with the commit.

    Lightning's default writes into `trainer.log_dir`, which for W&B is the shared save_dir (a
    second run would collide there). Here a W&B run keeps `lightning_config.yaml` in its run
    folder (synced with the run; named apart from W&B's own `config.yaml`) and `wandb.config`
    receives the resolved values plus `git_commit`. Other loggers get the file in their
    `log_dir` and `git_commit` as a hyperparameter. Lightning calls this on rank zero only.
    """

    def __init__(
        self,
        parser: LightningArgumentParser,
        config: Namespace,
        config_filename: str = "lightning_config.yaml",
        overwrite: bool = True,
        multifile: bool = False,
    ) -> None:
        super().__init__(
            parser, config, config_filename, overwrite, multifile, save_to_log_dir=False
        )

    @override
    def save_config(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        commit = git_commit(Path(__file__).resolve().parent)
        logger = trainer.logger
        if isinstance(logger, WandbLogger):
            run = logger.experiment
            run.config.update(
                {**self.config.as_dict(), "git_commit": commit}, allow_val_change=True
            )
            if getattr(run, "dir", None):
                self._write(Path(run.dir))
        elif logger is not None and getattr(logger, "log_dir", None):
            logger.log_hyperparams({"git_commit": commit})
            self._write(Path(logger.log_dir))

    def _write(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.parser.save(
            self.config,
            directory / self.config_filename,
            skip_none=False,
            overwrite=self.overwrite,
            multifile=self.multifile,
        )
