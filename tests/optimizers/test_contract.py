"""One contract test over every registered optimizer: closure semantics, schedulable `lr`, exact
state_dict round trip, devices, Lightning (logging, clipping, accumulation, bf16) and DDP."""

from __future__ import annotations

import io
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import lightning as L
import pytest
import torch
from torch import Tensor
from torch.utils.data import DataLoader
from torchmetrics import MeanMetric

from optiforge.callbacks import OptimizerAdapter
from optiforge.optimizers import available, create, needs, wants_graph
from optiforge.optimizers.sharpness_pass import sharpness_pass
from tests.optimizers.contract_helpers import (
    BATCH,
    DDP_NAMES,
    DDP_STEPS,
    batch,
    ddp_worker,
    flat,
    make_closure,
    network,
    per_sample_losses,
    plain_run,
)
from tests.trainers import quiet_trainer
from tests.two_ranks import WORLD_SIZE, run_on_two_ranks

NAMES = available()
GRAPH_WARNING = "ignore:Using backward\\(\\) with create_graph=True:UserWarning"
pytestmark = pytest.mark.filterwarnings(GRAPH_WARNING)


def float32_tolerance(name: str) -> float:
    """Newton-Schulz (Scion family) runs in float32 whatever the parameters' dtype."""
    return 1e-6 if "Scion" in name else 1e-10


@pytest.mark.parametrize("name", NAMES)
def test_step_runs_the_closure_at_the_current_weights(name: str) -> None:
    """step(closure) calls the closure, and (unless the method reports its first evaluation)
    once at exactly the weights before the step; a declared closure is required by name,
    an optional one may be left out after a manual backward with the same result."""
    net = network()
    optimizer = create(name, net.parameters())
    data = batch(0)
    closure = make_closure(net, optimizer, data)
    before, seen = flat(net), []

    def recording() -> Tensor:
        seen.append(torch.equal(flat(net), before))
        return closure()

    loss = optimizer.step(recording)
    assert seen and torch.isfinite(torch.as_tensor(loss)).all()
    if needs(name).reports == "pre_step":
        assert any(seen)
    if needs(name).closure:
        with pytest.raises(RuntimeError, match="closure"):
            create(name, network().parameters()).step()
        return
    manual_net = network()
    manual = create(name, manual_net.parameters())
    make_closure(manual_net, manual, data)()  # backward done outside step
    manual.step()
    torch.testing.assert_close(flat(manual_net), flat(net), rtol=0, atol=0)


@pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step\\(\\)` before")
@pytest.mark.parametrize("name", NAMES)
def test_torch_schedulers_drive_lr(name: str) -> None:
    """Every group has an `lr` that StepLR halves, and the step uses it: scaled to 0 by
    LambdaLR, 3 steps leave the weights unchanged; left alone, they move them."""
    net = network()
    optimizer = create(name, net.parameters())
    initial = [group["lr"] for group in optimizer.param_groups]
    halving = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    halving.step()
    assert [group["lr"] for group in optimizer.param_groups] == [lr / 2 for lr in initial]
    for factor, moves in ((0.0, False), (1.0, True)):
        net = network()
        optimizer = create(name, net.parameters())
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch, f=factor: f)
        before = flat(net)
        for step in range(3):
            optimizer.step(make_closure(net, optimizer, batch(step)))
            scheduler.step()
        assert torch.equal(flat(net), before) is not moves


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_round_trip_is_exact(name: str) -> None:
    """5 steps, state_dict through torch.save / torch.load into a fresh optimizer, 5 more steps
    equal 10 uninterrupted steps bit for bit."""
    reference = plain_run(name, steps=10)
    net = network()
    optimizer = create(name, net.parameters())
    for step in range(5):
        optimizer.step(make_closure(net, optimizer, batch(step)))
    buffer = io.BytesIO()
    torch.save(optimizer.state_dict(), buffer)
    buffer.seek(0)
    resumed = create(name, net.parameters())
    resumed.load_state_dict(torch.load(buffer, weights_only=False))
    for step in range(5, 10):
        resumed.step(make_closure(net, resumed, batch(step)))
    assert torch.equal(flat(net), reference)


@pytest.mark.parametrize("name", NAMES)
def test_steps_on_the_device_equal_the_cpu_steps(name: str, device: str) -> None:
    """4 float64 steps on `device` equal the CPU steps (Scion: to 1e-6, its Newton-Schulz is
    float32; others 1e-10) and the state stays on the device."""
    net = network().to(device)
    optimizer = create(name, net.parameters())
    x, y = batch(0)
    for _ in range(4):
        optimizer.step(make_closure(net, optimizer, (x.to(device), y.to(device))))
    for state in optimizer.state.values():
        for value in state.values():
            if isinstance(value, Tensor) and value.dim() > 0:
                assert value.device.type == device
    reference = network()
    cpu = create(name, reference.parameters())
    for _ in range(4):
        cpu.step(make_closure(reference, cpu, (x, y)))
    tolerance = float32_tolerance(name)
    torch.testing.assert_close(flat(net).cpu(), flat(reference), rtol=0, atol=tolerance)


@dataclass
class Call:
    """One `training_step` call: which batch, which rows, reported or not, its summed loss."""

    batch_idx: int
    rows: slice
    reported: bool
    loss_sum: float
    count: int


class NaiveRegression(L.LightningModule):
    """Written here, not the project's: selects and reduces as the sharpness pass says, but logs
    every call (it never checks `sharp.log`) and updates a torchmetrics mean every call."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.net = network(torch.float32)
        self.mean = MeanMetric()
        self.calls: list[Call] = []
        self.snapshots: dict[int, Tensor] = {}

    def on_train_batch_start(self, data: tuple[Tensor, Tensor], batch_idx: int) -> None:
        self.snapshots[batch_idx] = flat(self.net)

    def training_step(self, data: tuple[Tensor, Tensor], batch_idx: int) -> Tensor:
        sharp = sharpness_pass(self.trainer.optimizers)
        x, y = sharp.select(data)
        losses = per_sample_losses(self.net, x, y)
        self.log("train/loss", losses.mean(), on_step=False, on_epoch=True, batch_size=len(x))
        self.mean.update(losses.detach())
        self.log("train/mean", self.mean, on_step=False, on_epoch=True)
        rows = sharp.rows(len(data[0])) if sharp.rows else slice(None)
        summed = float(losses.detach().sum())
        self.calls.append(Call(batch_idx, rows, sharp.log, summed, len(x)))
        return sharp.reduce(losses)

    def backward(self, loss: Tensor, *args: object, **kwargs: object) -> None:
        if any(wants_graph(optimizer) for optimizer in self.trainer.optimizers):
            kwargs["create_graph"] = True
        loss.backward(*args, **kwargs)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return create(self.name, self.net.parameters())


def loss_at(weights: Tensor, data: tuple[Tensor, Tensor], rows: slice, autocast: bool) -> float:
    """Summed squared error of the network with flat `weights` on `data[rows]` (independent of
    the module: a fresh network; under bf16 autocast if `autocast`)."""
    net = network(torch.float32)
    torch.nn.utils.vector_to_parameters(weights, net.parameters())
    with torch.no_grad(), torch.autocast("cpu", torch.bfloat16, enabled=autocast):
        return float(per_sample_losses(net, data[0][rows], data[1][rows]).float().sum())


def expected_logged_loss(module: NaiveRegression, reports: str, autocast: bool) -> float:
    """Mean loss of the reported passes: recomputed at the weights before each step
    ("pre_step"), or the first evaluation of each step as computed ("first_evaluation")."""
    reported = [call for call in module.calls if call.reported]
    assert {call.batch_idx for call in reported} == set(module.snapshots)
    if reports == "first_evaluation":
        firsts = [next(c for c in module.calls if c.batch_idx == i) for i in module.snapshots]
        assert reported == firsts
        total = sum(call.loss_sum for call in reported)
    else:
        weights, data = module.snapshots, partial(batch, dtype=torch.float32)
        total = sum(
            loss_at(weights[c.batch_idx], data(c.batch_idx), c.rows, autocast) for c in reported
        )
    return total / sum(call.count for call in reported)


# setting -> (Trainer options, the plain loop's options, the LoopNeeds clause that allows it)
SETTINGS = {
    "32-true": ({}, {}, None),
    "gradient_clip_val": ({"gradient_clip_val": 0.05}, {"clip": 0.05}, "gradient_clipping"),
    "accumulate_grad_batches": ({"accumulate_grad_batches": 2}, {"accumulate": 2}, "accumulation"),
    "bf16-mixed": ({"precision": "bf16-mixed"}, {"autocast": True}, "half_precision"),
}


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("name", NAMES)
def test_lightning_run_equals_the_plain_loop_or_is_refused(name: str, setting: str) -> None:
    """Under OptimizerAdapter, a Trainer with `setting` takes the plain torch loop's steps (same
    clipping, accumulation, autocast) and logs (self.log and a torchmetrics mean) the loss of the
    reported passes at the weights before each step; or refuses by flag and optimizer name."""
    trainer_options, loop_options, clause = SETTINGS[setting]
    steps = 2 if setting == "accumulate_grad_batches" else 3
    batches = steps * trainer_options.get("accumulate_grad_batches", 1)
    data = [batch(i, dtype=torch.float32) for i in range(batches)]
    module = NaiveRegression(name)
    trainer = quiet_trainer(max_steps=steps, callbacks=[OptimizerAdapter()], **trainer_options)
    loader = DataLoader(data, batch_size=None)
    declared = needs(name)
    if clause is not None and not getattr(declared, clause):
        flag = next(iter(trainer_options))
        with pytest.raises(ValueError, match=f"^trainer.{flag}=.* cannot drive {name}: "):
            trainer.fit(module, loader)
        return
    trainer.fit(module, loader)
    expected = plain_run(name, steps, dtype=torch.float32, **loop_options)
    tolerance = 1e-6 if setting != "bf16-mixed" else 1e-4
    torch.testing.assert_close(flat(module.net), expected, rtol=0, atol=tolerance)
    logged = expected_logged_loss(module, declared.reports, setting == "bf16-mixed")
    for key in ("train/loss", "train/mean"):
        assert float(trainer.callback_metrics[key]) == pytest.approx(logged, rel=1e-5)


@pytest.fixture(scope="module")
def ddp_finals(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Tensor]:
    """One 2-process gloo launch for all DDP-capable optimizers: name -> [rank, parameters]."""
    out = Path(tmp_path_factory.mktemp("ddp")) / "finals.pt"
    run_on_two_ranks(ddp_worker, str(out))
    return torch.load(out, weights_only=False)


@pytest.mark.parametrize("name", DDP_NAMES)
def test_ddp_two_processes(name: str, ddp_finals: dict[str, Tensor]) -> None:
    """Both ranks hold the same weights, the weights moved, and for a "parity" declaration they
    equal one process's DDP_STEPS steps on the 2 x BATCH batch (first-order HVPs there, as DDP)."""
    finals = ddp_finals[name]
    torch.testing.assert_close(finals[0], finals[1], rtol=0, atol=1e-12)
    assert not torch.equal(finals[0], flat(network()))
    if needs(name).ddp == "parity":
        single = plain_run(name, DDP_STEPS, rows=WORLD_SIZE * BATCH, graph=False)
        tolerance = 1e-5 if "Scion" in name else 1e-9
        torch.testing.assert_close(finals[0], single, rtol=0, atol=tolerance)
