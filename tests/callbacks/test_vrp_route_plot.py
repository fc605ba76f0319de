"""VRP route plots: the figure itself, and the callback's choice of what (and whether) to log."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from lightning.pytorch.loggers import CSVLogger, WandbLogger

from optiforge.callbacks import VRPRoutePlot
from optiforge.callbacks.vrp_route_plot import figure_pixels, route_figure
from optiforge.problems.vrp.generator import generate


class RecordingWandbLogger(WandbLogger):
    """A WandbLogger that records `log_image` calls instead of starting a run."""

    def __init__(self) -> None:
        super().__init__(mode="disabled")
        self.calls: list[dict[str, object]] = []

    def log_image(self, key: str, images: list[object], step: int | None = None, **kwargs: object):
        self.calls.append({"key": key, "images": images, **kwargs})


def test_route_figure_draws_one_line_per_route_and_open_routes_stay_open() -> None:
    """Closed routes start and end at the depot, open ones end at their last customer; backhaul
    customers get their own marker; the figure renders to RGB pixels."""
    closed = generate("VRPB", 5, 1, seed=5)  # customers 1 and 4 are backhauls
    depot = closed.locs[0, 0].double().numpy()
    figure = route_figure(closed, [0, 1, 2, 0, 3, 4, 5, 0], "VRPB")
    axes = figure.axes[0]
    assert len(axes.lines) == 2 and axes.get_title() == "VRPB"
    for line in axes.lines:
        xy = line.get_xydata()
        np.testing.assert_allclose(xy[0], depot)
        np.testing.assert_allclose(xy[-1], depot)
    labels = {text.get_text() for text in axes.get_legend().get_texts()}
    assert labels == {"linehaul", "backhaul", "depot"}
    opened = replace(closed, open_route=torch.tensor([True]))
    (line,) = route_figure(opened, [0, 4, 2, 0], "open").axes[0].lines
    np.testing.assert_allclose(line.get_xydata()[-1], closed.locs[0, 2].double().numpy())
    pixels = figure_pixels(figure)
    assert pixels.dtype == np.uint8 and pixels.ndim == 3 and pixels.shape[2] == 3


def test_route_figure_takes_one_instance() -> None:
    """A batch of two is rejected."""
    with pytest.raises(ValueError, match="one instance"):
        route_figure(generate("CVRP", 3, 2, seed=0), [0, 1, 2, 3, 0], "x")


def outputs_of(name: str, cost: float) -> dict[str, object]:
    """A test_step output for the set `name`: two instances with one route per customer."""
    instances = generate(name.split("/")[0], 4, 2, seed=1)
    solutions = torch.tensor([[0, 1, 0, 2, 0, 3, 0, 4, 0]] * 2)
    costs = torch.full((2,), cost)
    return {"instances": instances, "solutions": solutions, "costs": costs, "name": name}


def test_callback_logs_one_image_per_variant_to_wandb_only(tmp_path: Path) -> None:
    """With a WandbLogger the first instance of each variant is plotted once at test end;
    with another logger nothing is kept or logged."""
    callback, logger = VRPRoutePlot(key="test/routes"), RecordingWandbLogger()
    trainer = SimpleNamespace(logger=logger, is_global_zero=True)
    callback.on_test_start(trainer, None)  # type: ignore[arg-type]
    for batch_idx, name in enumerate(["CVRP/n4", "VRPTW/n4", "CVRP/n4", "OVRP/n4"]):
        outputs = outputs_of(name, cost=batch_idx + 1.0)
        callback.on_test_batch_end(trainer, None, outputs, None, batch_idx)  # type: ignore[arg-type]
    callback.on_test_end(trainer, None)  # type: ignore[arg-type]
    (call,) = logger.calls
    assert call["key"] == "test/routes" and len(call["images"]) == 3  # type: ignore[arg-type]
    assert call["caption"] == [
        "CVRP/n4, n=4, cost 1.0000",
        "OVRP/n4, n=4, cost 4.0000",
        "VRPTW/n4, n=4, cost 2.0000",
    ]

    other = SimpleNamespace(logger=CSVLogger(tmp_path), is_global_zero=True)
    quiet = VRPRoutePlot()
    quiet.on_test_batch_end(other, None, outputs_of("CVRP/n4", cost=1.0), None, 0)  # type: ignore[arg-type]
    quiet.on_test_end(other, None)  # type: ignore[arg-type]
    assert quiet.examples == {}


def test_empty_key_is_rejected() -> None:
    """The image key must be non-empty."""
    with pytest.raises(ValueError, match="key"):
        VRPRoutePlot(key="")
