"""One optimizer-zoo run: a testbed's LightningModule and DataModule built from
configs/testbeds/, one optimizer at one lr and seed, a fixed number of steps under an in-process
Trainer (no logger, no checkpoints, `OptimizerAdapter` serving what the optimizer declares),
then validation and test at the final weights.

The seed sets the initialization and the optimizer's own random draws (`seed` argument of the
zeroth-order and RW-SAM optimizers); the data split and the batch order are the testbed's (data
seed 0) for every run, so seeds differ in the model's start only.
"""

from __future__ import annotations

import contextlib
import logging
import statistics
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import lightning as L
import torch
import yaml
from lightning.pytorch.callbacks import Callback
from torch import Tensor
from typing_extensions import override

from optiforge.benchmarks.harness.record import ROOT
from optiforge.benchmarks.optimizer_zoo_specs import Entrant, resolve
from optiforge.benchmarks.peak_memory import PeakMemory
from optiforge.benchmarks.quiet_trainer import quiet_trainer
from optiforge.callbacks import OptimizerAdapter

TESTBED_CONFIGS = ROOT / "configs" / "testbeds"


@dataclass(frozen=True)
class Testbed:
    """A testbed config and the metric the lr is chosen on (validation) and reported (test)."""

    name: str
    val_metric: str
    test_metric: str
    higher_is_better: bool
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)  # model / data init_args

    def build(self) -> tuple[L.LightningModule, L.LightningDataModule]:
        """The config's model and data; every training batch full (drop_last where the data
        module has it, so m-SAM's micro-batches divide it)."""
        config = yaml.safe_load((TESTBED_CONFIGS / f"{self.name}.yaml").read_text())
        model_cls = resolve(config["model"]["class_path"])
        model_args = {**config["model"].get("init_args", {}), **self.overrides.get("model", {})}
        model = model_cls(**model_args)
        data_cls = resolve(config["data"]["class_path"])
        data_args = {**(config["data"].get("init_args") or {}), **self.overrides.get("data", {})}
        if "drop_last" in data_cls.__init__.__code__.co_varnames:
            data_args["drop_last"] = True
        return model, data_cls(**data_args)


TESTBEDS = {
    "digits_cnn": Testbed("digits_cnn", "val/acc", "test/acc", True),
    # the zoo's budget: half the width and batch of the testbed (as the Scion lr sweep's task)
    "char_lm": Testbed(
        "char_lm",
        "val/loss",
        "test/loss",
        False,
        {"model": {"d_model": 64}, "data": {"batch_size": 16}},
    ),
    "compas_mlp": Testbed("compas_mlp", "val/acc", "test/acc", True),
}


class StepTimer(Callback):
    """Wall seconds of every training step (batch start to batch end: forward, backward and
    the optimizer's step, closure passes included)."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self._start = 0.0

    @override
    def on_train_batch_start(self, *args: Any) -> None:
        self._start = time.perf_counter()

    @override
    def on_train_batch_end(self, *args: Any) -> None:
        self.seconds.append(time.perf_counter() - self._start)


class StepPeakMemory(Callback):
    """Peak tensor memory over the first `steps` training steps (forward, backward and the
    optimizer's step, closure passes included), above what was held when the first step began
    (its batch already loaded): `PeakMemory` on the Trainer's device, from the first step's
    start to the end of step `steps`."""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.peak_bytes: int | None = None
        self._meter: PeakMemory | None = None
        self._done = 0

    @override
    def on_train_batch_start(self, trainer: L.Trainer, *args: Any) -> None:
        if self._done == 0 and self._meter is None:
            self._meter = PeakMemory(trainer.strategy.root_device)
            self._meter.start()

    @override
    def on_train_batch_end(self, *args: Any) -> None:
        self._done += 1
        if self._meter is not None and self._done == self.steps:
            self.peak_bytes = self._meter.stop()
            self._meter = None

    @override
    def on_train_end(self, *args: Any) -> None:
        if self._meter is not None:  # fewer steps than asked: the peak over those taken
            self.peak_bytes = self._meter.stop()
            self._meter = None


def state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes of the distinct tensors an optimizer holds besides its parameters: its state, a
    nested optimizer's (SAM's base optimizer) and any attribute object (HessianReuseAGD's
    Hessian). A tensor sharing a parameter's storage is the parameter, not state."""
    seen = {p.untyped_storage().data_ptr() for g in optimizer.param_groups for p in g["params"]}
    visited: set[int] = set()
    total = 0
    stack: list[Any] = [v for k, v in vars(optimizer).items() if k != "param_groups"]
    while stack:
        value = stack.pop()
        if id(value) in visited or isinstance(value, type):
            continue
        visited.add(id(value))
        if isinstance(value, Tensor):
            key = value.untyped_storage().data_ptr()
            if key not in seen:
                seen.add(key)
                total += value.untyped_storage().nbytes()
        elif isinstance(value, torch.optim.Optimizer):
            stack.extend(v for k, v in vars(value).items() if k != "param_groups")
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list | tuple | set):
            stack.extend(value)
        elif hasattr(value, "__dict__"):
            stack.extend(vars(value).values())
    return total


@dataclass
class RunResult:
    """What one run measured."""

    val: float
    test: float
    step_seconds: list[float] = field(default_factory=list)
    state_bytes: int = 0


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Lightning's per-Trainer info lines and data-loader hints off for the many small fits."""
    logger = logging.getLogger("lightning.pytorch")
    level = logger.level
    logger.setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*(num_workers|create_graph=True|LeafSpec).*")
        try:
            yield
        finally:
            logger.setLevel(level)


def fit(
    testbed: Testbed, entrant: Entrant, lr: float, seed: int, steps: int, callbacks: list[Callback]
) -> tuple[L.LightningModule, L.LightningDataModule, torch.optim.Optimizer]:
    """`steps` steps of `entrant` at `lr` from initialization `seed` (CPU, `callbacks` on the
    Trainer): the trained model, its data and the optimizer."""
    L.seed_everything(seed, verbose=False)
    model, data = testbed.build()
    optimizer = entrant.build(model.parameters(), lr, seed, data.batch_size)
    model.configure_optimizers = lambda: optimizer
    trainer = quiet_trainer(
        -1, max_steps=steps, deterministic=True, callbacks=[OptimizerAdapter(), *callbacks]
    )
    trainer.fit(model, datamodule=data)
    return model, data, optimizer


def train_once(
    testbed: Testbed,
    entrant: Entrant,
    lr: float,
    seed: int,
    steps: int,
    eval_batches: int | None = None,
) -> RunResult:
    """`steps` steps of `entrant` at `lr` from initialization `seed`, then the validation and
    test metrics at the final weights (`eval_batches` batches of each split; None: all)."""
    with quiet():
        timer = StepTimer()
        model, data, optimizer = fit(testbed, entrant, lr, seed, steps, [timer])
        limit = 1.0 if eval_batches is None else eval_batches
        evaluate = quiet_trainer(1, limit_val_batches=limit, limit_test_batches=limit)
        (val,) = evaluate.validate(model, datamodule=data, verbose=False)
        (test,) = evaluate.test(model, datamodule=data, verbose=False)
    return RunResult(
        val=float(val[testbed.val_metric]),
        test=float(test[testbed.test_metric]),
        step_seconds=timer.seconds,
        state_bytes=state_bytes(optimizer),
    )


def peak_step_bytes(testbed: Testbed, entrant: Entrant, lr: float, steps: int) -> int:
    """Peak tensor bytes of `steps` training steps of `entrant` at `lr` (seed 0) above what was
    held before the first (`StepPeakMemory`); no evaluation."""
    meter = StepPeakMemory(steps)
    with quiet():
        fit(testbed, entrant, lr, 0, steps, [meter])
    if meter.peak_bytes is None:
        raise RuntimeError(f"{entrant.name} on {testbed.name}: no training step was taken")
    return meter.peak_bytes


def median_step(seconds: list[float], warmup: int = 3) -> float:
    """Median step time after the first `warmup` steps (state allocation, first-call costs),
    or over all steps when there are no more than `warmup`."""
    kept = seconds[warmup:] if len(seconds) > warmup else seconds
    return statistics.median(kept)
