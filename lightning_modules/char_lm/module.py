"""Character-level language model: next-character cross-entropy, reported also in bits/char."""

from __future__ import annotations

import math

import lightning as L
from torch import Tensor
from torch.nn import functional as F

from optiforge.lightning_modules.char_lm.model import CharTransformer
from optiforge.optimizers.sharpness_pass import sharpness_pass


class CharLanguageModel(L.LightningModule):
    """Trains `CharTransformer` to predict every next character of its input windows.

    Logs `train/loss`, `val/loss`, `val/bpc`, `test/loss`, `test/bpc` (nats per character and
    bits per character = loss / ln 2). It defines no `configure_optimizers`: the optimizer comes
    from the config, as for `optiforge.lightning_modules.Classifier`.

    Args:
        vocab_size: size of the data's character vocabulary (65 for tinyshakespeare); checked
            against the datamodule's `vocab_size` at setup.
        context_length: longest window, must be >= the data's `context_length`.
        d_model: residual stream width, a multiple of `n_heads`.
        n_heads: attention heads per block.
        n_layers: transformer blocks.
        dropout: dropout probability, in [0, 1).
    """

    def __init__(
        self,
        vocab_size: int = 65,
        context_length: int = 64,
        d_model: int = 128,
        n_heads: int = 4,
        n_layers: int = 2,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.net = CharTransformer(vocab_size, context_length, d_model, n_heads, n_layers, dropout)

    def setup(self, stage: str) -> None:
        """Fail early if the datamodule's vocabulary or windows do not fit this model."""
        datamodule = self.trainer.datamodule if self._trainer is not None else None
        data_vocab = getattr(datamodule, "vocab_size", None)
        if data_vocab is not None and data_vocab != self.hparams.vocab_size:
            raise ValueError(
                f"model.vocab_size={self.hparams.vocab_size} but the data has {data_vocab} "
                f"distinct characters; set model.vocab_size: {data_vocab}"
            )
        data_context = getattr(datamodule, "context_length", None)
        if data_context is not None and data_context > self.hparams.context_length:
            raise ValueError(
                f"data.context_length={data_context} exceeds "
                f"model.context_length={self.hparams.context_length}"
            )

    def forward(self, ids: Tensor) -> Tensor:
        """Logits [batch, T, vocab_size] for token ids [batch, T]."""
        return self.net(ids)

    def loss(self, batch: tuple[Tensor, Tensor]) -> Tensor:
        """Mean next-character cross-entropy (nats) of a batch (inputs [B, T], targets [B, T])."""
        ids, targets = batch
        logits = self(ids)
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten())

    def training_step(self, batch: tuple[Tensor, ...], batch_idx: int) -> Tensor:
        """Per-window losses (the mean over a window's characters, or their weighted mean when
        the batch is (inputs, targets, weights [B, T]), e.g. `CopyingDataModule`'s) reduced as
        the optimizer's sharpness pass asks (`optiforge.optimizers.sharpness_pass`): m-SAM,
        n-SAM and RW-SAM train on this module as on the classifier. Logged once per step, at
        the unperturbed weights."""
        sharp = sharpness_pass(self.trainer.optimizers)
        ids, targets, *weights = sharp.select(batch)
        logits = self(ids)
        losses = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
        if weights:  # (inputs, targets, weights): a window's weighted mean
            losses = (losses * weights[0]).sum(dim=1) / weights[0].sum(dim=1)
        else:
            losses = losses.mean(dim=1)
        if sharp.log:
            self.log(
                "train/loss",
                losses.detach().mean(),
                on_step=True,
                on_epoch=True,
                prog_bar=True,
                batch_size=ids.shape[0],
            )
        return sharp.reduce(losses)

    def _evaluate(self, batch: tuple[Tensor, Tensor], split: str) -> Tensor:
        loss = self.loss(batch)
        size = batch[0].shape[0]
        self.log(f"{split}/loss", loss, sync_dist=True, prog_bar=True, batch_size=size)
        self.log(f"{split}/bpc", loss / math.log(2), sync_dist=True, batch_size=size)
        return loss

    def validation_step(self, batch: tuple[Tensor, Tensor], batch_idx: int) -> Tensor:
        return self._evaluate(batch, "val")

    def test_step(self, batch: tuple[Tensor, Tensor], batch_idx: int) -> Tensor:
        return self._evaluate(batch, "test")
