"""The contract between a sharpness-aware optimizer and the loss its closure computes.

SAM and ASAM need nothing from the closure. m-SAM, n-SAM and RW-SAM do: m-SAM evaluates the loss
on one micro-batch at a time, n-SAM on separate ascent and descent parts of the batch, RW-SAM on
per-sample losses. Before every closure call these optimizers set `optimizer.sharpness_pass` to
a `SharpnessPass`; a closure (or a LightningModule's `training_step`) that opts in does

    sharp = sharpness_pass(optimizer)          # whole-batch mean for other optimizers
    inputs, targets = sharp.select((inputs, targets))
    losses = loss_fn(model(inputs), targets)   # per-sample losses, shape [b]
    if sharp.log: ...log losses.mean()...
    loss = sharp.reduce(losses)
    loss.backward()
    return loss

`select` slices every batch-first tensor of the batch; `reduce` returns the mean (ordinary and
perturbed passes), the RW-SAM-weighted sum (ascent pass), or records the losses and returns a
zero that is no function of the parameters (RW-SAM probe pass, forward only: its backward costs
nothing and leaves every gradient alone; a step returning None would stop Lightning under DDP).
A pass checks afterwards that the closure honoured it, so a closure that ignores the contract
fails loudly instead of training a different method.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist


def batch_size_of(batch: Any) -> int:
    """Leading dimension shared by the tensors of a (nested) batch."""
    sizes = {t.shape[0] for t in _tensors(batch)}
    if len(sizes) != 1:
        raise ValueError(
            f"batch tensors must share their first dimension, got sizes {sorted(sizes)}"
        )
    return sizes.pop()


def _tensors(batch: Any) -> list[torch.Tensor]:
    if isinstance(batch, torch.Tensor):
        return [batch]
    if isinstance(batch, dict):
        return [t for value in batch.values() for t in _tensors(value)]
    if isinstance(batch, (list, tuple)):
        return [t for value in batch for t in _tensors(value)]
    return []


def _slice(batch: Any, rows: slice) -> Any:
    if isinstance(batch, torch.Tensor):
        return batch[rows]
    if isinstance(batch, dict):
        return {key: _slice(value, rows) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(_slice(value, rows) for value in batch)
    return batch


@dataclass
class SharpnessPass:
    """What one closure call must compute.

    Attributes:
        rows: a function of the batch size returning the rows to use (None: the whole batch).
        perturbed: the weights are currently perturbed (freeze running statistics, skip metrics).
        log: this pass is at the current weights and covers the samples to report on.
        probe: forward only: record the per-sample losses, return a constant zero (RW-SAM's probe).
        reweight: RW-SAM ascent: weight sample i by softmax_i(temperature * |l_i - probe_i| / delta)
        ranks: number of DDP processes sharing the reweighted ascent (1: this process alone). With
            more, the softmax runs over the samples of all ranks (two all-reduces) and the
            weighted sum is scaled by `ranks`, so DDP's gradient average is the gradient of
            sum_i p_i f_i over the global batch, as in one process.
        probe_losses: filled by a probe pass: per-sample losses [b] at the probed weights.
        batch_size: filled by `select`: the size of the full batch it saw.
        temperature: RW-SAM's lambda.
        delta: RW-SAM's finite-difference step.
    """

    rows: Callable[[int], slice] | None = None
    perturbed: bool = False
    log: bool = True
    probe: bool = False
    reweight: bool = False
    probe_losses: torch.Tensor | None = None
    batch_size: int | None = None
    temperature: float = 1.0
    delta: float = 1e-3
    ranks: int = 1
    selected: bool = field(default=False, repr=False)
    reduced: bool = field(default=False, repr=False)

    def select(self, batch: Any) -> Any:
        """The rows of `batch` this pass uses (all tensors sliced along dim 0)."""
        self.batch_size = batch_size_of(batch)
        self.selected = True
        if self.rows is None:
            return batch
        return _slice(batch, self.rows(self.batch_size))

    def reduce(self, losses: torch.Tensor) -> torch.Tensor:
        """Scalar loss to differentiate from per-sample `losses` [b] (a probe: a constant 0)."""
        if losses.ndim != 1:
            raise ValueError(
                f"reduce expects per-sample losses of shape [b], got {tuple(losses.shape)}"
            )
        self.reduced = True
        if self.probe:
            self.probe_losses = losses.detach()
            return losses.new_zeros((), requires_grad=True)
        if self.reweight:
            return (self.sample_weights(losses) * losses).sum() * self.ranks
        return losses.mean()

    def sample_weights(self, losses: torch.Tensor) -> torch.Tensor:
        """RW-SAM's Gibbs weights p_i = softmax(lambda * ||grad f_i||), with the per-sample gradient
        norm estimated by |f_i(x + delta z) - f_i(x)| / delta from the probe pass. With `ranks`
        > 1 the softmax normalizes over all ranks' samples (this rank's weights sum to <= 1)."""
        if self.probe_losses is None or self.probe_losses.shape != losses.shape:
            raise RuntimeError("RW-SAM's reweighted pass needs the probe pass's per-sample losses")
        grad_norms = (self.probe_losses - losses.detach()).abs() / self.delta
        logits = self.temperature * grad_norms
        if self.ranks == 1:
            return torch.softmax(logits, dim=0)
        top = logits.max()
        dist.all_reduce(top, op=dist.ReduceOp.MAX)
        exponentials = torch.exp(logits - top)
        total = exponentials.sum()
        dist.all_reduce(total)
        return exponentials / total

    def check_honoured(self, optimizer_name: str) -> None:
        """Raise if the closure ignored this pass (did not call `select` and `reduce`)."""
        needs_select = self.rows is not None
        needs_reduce = self.probe or self.reweight
        if (needs_select and not self.selected) or (needs_reduce and not self.reduced):
            raise RuntimeError(
                f"{optimizer_name} needs a closure that follows the sharpness-pass contract "
                "(optiforge.optimizers.sharpness_pass: call sharp.select(batch) and "
                "sharp.reduce(per-sample losses)); the closure ignored it. "
                "optiforge.lightning_modules.Classifier implements it."
            )


def sharpness_pass(optimizer: Any) -> SharpnessPass:
    """The pass `optimizer` asks for, or a plain whole-batch mean for any other optimizer.

    Accepts a torch optimizer, Lightning's `LightningOptimizer` wrapper, or a list of them (the
    pass of the first one that has one)."""
    candidates = optimizer if isinstance(optimizer, (list, tuple)) else [optimizer]
    for candidate in candidates:
        current = getattr(candidate, "sharpness_pass", None)
        if isinstance(current, SharpnessPass):
            return current
    return SharpnessPass()
