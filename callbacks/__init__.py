"""Lightning callbacks (and the W&B logger default) that any Lightning project can import."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lazy_exports import lazy_exports

if TYPE_CHECKING:
    from callbacks.dual_updates import DualUpdates, lagrangian_step, require_dual_updates
    from callbacks.fit_summary import FitSummary
    from callbacks.forward_only import ForwardOnly
    from callbacks.latest_checkpoint import LatestCheckpoint
    from callbacks.save_config import LoggerSaveConfigCallback
    from callbacks.sharpness_guard import SharpnessGuard
    from callbacks.vrp_route_plot import VRPRoutePlot
    from callbacks.wandb_logger import OptiforgeWandbLogger, resolve_wandb_mode

__all__ = [
    "DualUpdates",
    "lagrangian_step",
    "require_dual_updates",
    "FitSummary",
    "ForwardOnly",
    "LatestCheckpoint",
    "LoggerSaveConfigCallback",
    "OptiforgeWandbLogger",
    "SharpnessGuard",
    "VRPRoutePlot",
    "resolve_wandb_mode",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "callbacks.dual_updates": ("DualUpdates", "lagrangian_step", "require_dual_updates"),
        "callbacks.fit_summary": ("FitSummary",),
        "callbacks.forward_only": ("ForwardOnly",),
        "callbacks.latest_checkpoint": ("LatestCheckpoint",),
        "callbacks.save_config": ("LoggerSaveConfigCallback",),
        "callbacks.sharpness_guard": ("SharpnessGuard",),
        "callbacks.vrp_route_plot": ("VRPRoutePlot",),
        "callbacks.wandb_logger": ("OptiforgeWandbLogger", "resolve_wandb_mode"),
    },
)
