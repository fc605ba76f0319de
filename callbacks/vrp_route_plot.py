"""Route plots of one solved test instance per VRP variant, logged to W&B when testing ends.

Works with any LightningModule whose `test_step` returns a mapping with "instances" (a
`VRPBatch`), "solutions" ([B, T] node sequences, 0 between routes), "costs" ([B], the
validator's costs) and "name" (the evaluation set, "VRPTW/n50" or "CVRP/X-n101-k25"), e.g.
`optiforge.lightning_modules.POMOTeacher`. The first instance of every variant (the part of the name
before "/") is kept; nothing is drawn unless the logger is a `WandbLogger`.

Example (any Lightning project):
    >>> from optiforge.callbacks import VRPRoutePlot
    >>> callback = VRPRoutePlot(key="test/routes")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import lightning as L
import numpy as np
import torch
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.loggers import WandbLogger
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from typing_extensions import override

from optiforge.problems.vrp.instance import VRPBatch
from optiforge.problems.vrp.routes import split_routes


def route_figure(
    instance: VRPBatch, solution: Sequence[int] | np.ndarray | torch.Tensor, title: str
) -> Figure:
    """A figure of one instance (`instance` has batch size 1) and its routes: one line per
    route, from the depot (square) through its customers and back unless routes are open;
    linehaul customers as dots, backhaul customers as triangles."""
    if instance.batch_size != 1:
        raise ValueError(f"route_figure takes one instance, got a batch of {instance.batch_size}")
    locs = instance.locs[0].detach().cpu().double().numpy()
    is_backhaul = (instance.backhaul_demand[0] > 0).cpu().numpy()
    is_open = bool(instance.open_route[0])
    figure = Figure(figsize=(5, 5))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for route in split_routes(solution):
        path = [0, *route] + ([] if is_open else [0])
        axes.plot(locs[path, 0], locs[path, 1], linewidth=1.0)
    customers = np.arange(len(locs)) > 0
    linehaul = customers & ~is_backhaul
    axes.scatter(locs[linehaul, 0], locs[linehaul, 1], s=12, c="black", label="linehaul")
    if is_backhaul.any():
        axes.scatter(
            locs[is_backhaul, 0],
            locs[is_backhaul, 1],
            s=18,
            marker="^",
            c="tab:red",
            label="backhaul",
        )
    axes.scatter(locs[:1, 0], locs[:1, 1], s=60, marker="s", c="tab:blue", label="depot")
    axes.set_title(title)
    axes.set_aspect("equal")
    axes.legend(loc="upper right", fontsize="small")
    return figure


def figure_pixels(figure: Figure) -> np.ndarray:
    """RGB pixels [H, W, 3] uint8 of a figure with an Agg canvas."""
    figure.canvas.draw()
    return np.asarray(figure.canvas.buffer_rgba())[..., :3].copy()


class VRPRoutePlot(Callback):
    """Logs `key` = one route plot per variant (first test instance of each) at test end.

    Args:
        key: the W&B image key.
    """

    def __init__(self, key: str = "test/routes") -> None:
        if not key:
            raise ValueError("key must be a non-empty string")
        self.key = key
        self.examples: dict[str, tuple[str, VRPBatch, torch.Tensor, float]] = {}

    @override
    def on_test_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.examples = {}

    @override
    def on_test_batch_end(
        self,
        trainer: L.Trainer,
        pl_module: L.LightningModule,
        outputs: Mapping[str, object] | None,
        batch: object,
        batch_idx: int,
        dataloader_idx: int = 0,
    ) -> None:
        if not isinstance(trainer.logger, WandbLogger) or not outputs:
            return
        name = str(outputs["name"])
        variant_name = name.split("/")[0]
        if variant_name not in self.examples:
            instance = outputs["instances"].index(0).to("cpu")
            solution = outputs["solutions"][0].cpu()
            self.examples[variant_name] = (name, instance, solution, float(outputs["costs"][0]))

    @override
    def on_test_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        logger = trainer.logger
        if not isinstance(logger, WandbLogger) or not self.examples or not trainer.is_global_zero:
            return
        images, captions = [], []
        for name, instance, solution, cost in (self.examples[key] for key in sorted(self.examples)):
            caption = f"{name}, n={instance.num_nodes - 1}, cost {cost:.4f}"
            images.append(figure_pixels(route_figure(instance, solution, caption)))
            captions.append(caption)
        logger.log_image(key=self.key, images=images, caption=captions)
