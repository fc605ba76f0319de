"""The project's default logger: W&B, offline by itself when no credentials are present."""

from __future__ import annotations

import netrc
import os
from typing import Any, Literal

from lightning.pytorch.loggers import WandbLogger
from lightning.pytorch.utilities import rank_zero_info
from typing_extensions import override

WandbMode = Literal["auto", "online", "offline", "disabled"]
ALLOWED_MODES = ("auto", "online", "offline", "disabled")


def has_wandb_credentials() -> bool:
    """True when `WANDB_API_KEY` is set or `wandb login` stored a key in ~/.netrc."""
    if os.environ.get("WANDB_API_KEY"):
        return True
    try:
        return netrc.netrc().authenticators("api.wandb.ai") is not None
    except (FileNotFoundError, netrc.NetrcParseError):
        return False


def resolve_wandb_mode(mode: WandbMode) -> Literal["online", "offline", "disabled"]:
    """Turn "auto" into a concrete mode: `WANDB_MODE` if set, else online iff credentials exist."""
    if mode not in ALLOWED_MODES:
        raise ValueError(
            f"trainer.logger.init_args.mode must be one of {ALLOWED_MODES}, got {mode!r}"
        )
    if mode != "auto":
        return mode
    env_mode = os.environ.get("WANDB_MODE")
    if env_mode:
        return "offline" if env_mode == "dryrun" else env_mode  # type: ignore[return-value]
    return "online" if has_wandb_credentials() else "offline"


class OptiforgeWandbLogger(WandbLogger):
    """`WandbLogger` for project `optiforge` whose mode defaults to "auto".

    Offline runs write under `<save_dir>/wandb/` and still record checkpoints as artifacts
    (`log_model`), which `wandb sync` uploads later; Lightning's own `offline=True` flag refuses
    `log_model`, so the mode goes to `wandb.init(mode=...)` instead.

    Args:
        project: W&B project.
        name: run name (W&B picks one when None).
        save_dir: directory that receives `wandb/`.
        mode: "auto" (online iff `WANDB_API_KEY` or a stored login exists), "online", "offline"
            or "disabled".
        log_model: upload checkpoints as artifacts: True at the end, "all" on every save.
        entity: W&B team or user; the key's default when None.
        group: W&B run group.
        tags: W&B run tags.
        id: the W&B run to log into (continued if it exists, wandb's `resume="allow"`); None
            for a new run. `train.py fit --ckpt_path` sets it to the checkpoint's run.
    """

    def __init__(
        self,
        project: str = "optiforge",
        name: str | None = None,
        save_dir: str = ".",
        mode: WandbMode = "auto",
        log_model: bool | Literal["all"] = True,
        entity: str | None = None,
        group: str | None = None,
        tags: list[str] | None = None,
        id: str | None = None,
    ) -> None:
        resolved = resolve_wandb_mode(mode)
        self.offline_reason = (
            "offline by request"
            if mode == "offline" or "WANDB_MODE" in os.environ
            else "no credentials"
        )
        super().__init__(
            project=project,
            name=name,
            save_dir=save_dir,
            log_model=log_model,
            mode=resolved,
            entity=entity,
            group=group,
            tags=tags,
            id=id,
        )
        # Lightning passes anonymous=None, which wandb >= 0.19 warns about on every run
        self._wandb_init.pop("anonymous", None)
        self.mode = resolved

    @property
    @override
    def experiment(self) -> Any:
        """The W&B run, started on first use; an offline start says where it writes."""
        if self._experiment is None and self.mode == "offline":
            rank_zero_info(
                f"W&B: {self.offline_reason}, logging offline to "
                f"{os.path.join(self.save_dir or '.', 'wandb')}; upload later with "
                "`wandb sync wandb/offline-run-*` (set WANDB_API_KEY to log online)."
            )
        return super().experiment
