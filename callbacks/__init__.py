"""Lightning callbacks (and the W&B logger default) that any Lightning project can import."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optiforge.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from optiforge.callbacks.fit_summary import FitSummary
    from optiforge.callbacks.latest_checkpoint import LatestCheckpoint
    from optiforge.callbacks.model_summary import CompactModelSummary
    from optiforge.callbacks.needle_retrieval import NeedleRetrieval
    from optiforge.callbacks.optimizer_adapter import OptimizerAdapter
    from optiforge.callbacks.save_config import LoggerSaveConfigCallback
    from optiforge.callbacks.vrp_route_plot import VRPRoutePlot
    from optiforge.callbacks.wandb_logger import OptiforgeWandbLogger, resolve_wandb_mode

__all__ = [
    "NeedleRetrieval",
    "CompactModelSummary",
    "FitSummary",
    "LatestCheckpoint",
    "LoggerSaveConfigCallback",
    "OptimizerAdapter",
    "OptiforgeWandbLogger",
    "VRPRoutePlot",
    "resolve_wandb_mode",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "optiforge.callbacks.needle_retrieval": ("NeedleRetrieval",),
        "optiforge.callbacks.fit_summary": ("FitSummary",),
        "optiforge.callbacks.latest_checkpoint": ("LatestCheckpoint",),
        "optiforge.callbacks.model_summary": ("CompactModelSummary",),
        "optiforge.callbacks.optimizer_adapter": ("OptimizerAdapter",),
        "optiforge.callbacks.save_config": ("LoggerSaveConfigCallback",),
        "optiforge.callbacks.vrp_route_plot": ("VRPRoutePlot",),
        "optiforge.callbacks.wandb_logger": ("OptiforgeWandbLogger", "resolve_wandb_mode"),
    },
)
