"""The char-level transformer: causality, shapes, fitting a repeated string, bpc, setup checks."""

from __future__ import annotations

import math
from pathlib import Path

import lightning as L
import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from optiforge.datamodules import TinyShakespeareDataModule
from optiforge.lightning_modules import CharLanguageModel
from optiforge.lightning_modules.char_lm import CharTransformer


def tiny_net(dropout: float = 0.0) -> CharTransformer:
    torch.manual_seed(0)
    return CharTransformer(
        vocab_size=7, context_length=12, d_model=16, n_heads=2, n_layers=2, dropout=dropout
    )


def test_changing_a_later_character_leaves_earlier_logits_unchanged() -> None:
    """Causality: logits at positions < 8 are bit-identical; from position 8 on they change."""
    net = tiny_net().eval()
    ids = torch.randint(0, 7, (3, 12), generator=torch.Generator().manual_seed(1))
    changed = ids.clone()
    changed[:, 8] = (ids[:, 8] + 1) % 7
    with torch.no_grad():
        before, after = net(ids), net(changed)
    assert torch.equal(before[:, :8], after[:, :8])
    assert not torch.allclose(before[:, 8], after[:, 8])
    assert not torch.allclose(before[:, 11], after[:, 11])


def test_output_shape_and_too_long_input() -> None:
    """Logits are [batch, T, vocab] for any T <= context_length; longer inputs raise."""
    net = tiny_net()
    assert net(torch.zeros(2, 5, dtype=torch.long)).shape == (2, 5, 7)
    assert net(torch.zeros(4, 12, dtype=torch.long)).shape == (4, 12, 7)
    with pytest.raises(ValueError, match="model.context_length=12"):
        net(torch.zeros(1, 13, dtype=torch.long))


def repeated_string_batch() -> tuple[torch.Tensor, torch.Tensor]:
    """All 6 windows of length 12 of "abcdefabcdef..." (next char fully determined)."""
    ids = torch.arange(30) % 6
    starts = range(6)
    inputs = torch.stack([ids[s : s + 12] for s in starts])
    targets = torch.stack([ids[s + 1 : s + 13] for s in starts])
    return inputs, targets


def test_a_few_steps_fit_a_repeated_string_and_bpc_is_loss_over_ln2() -> None:
    """60 AdamW steps on a periodic string drive the loss from ~ln 7 to < 0.05 nats; the
    validation metrics logged through Lightning satisfy bpc = loss / ln 2."""
    torch.manual_seed(0)
    model = CharLanguageModel(vocab_size=7, context_length=12, d_model=16, n_heads=2, n_layers=1)
    batch = repeated_string_batch()
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.02)
    initial = model.loss(batch).item()
    for _ in range(60):
        loss = model.loss(batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    final = model.loss(batch).item()
    assert abs(initial - math.log(7)) < 0.1
    assert final < 0.05

    trainer = L.Trainer(
        accelerator="cpu", logger=False, enable_progress_bar=False, enable_checkpointing=False
    )
    loader = DataLoader(TensorDataset(*batch), batch_size=4)  # batches of 4 and 2 windows
    metrics = trainer.validate(model, loader, verbose=False)[0]
    assert metrics["val/loss"] == pytest.approx(final, rel=1e-4)
    assert metrics["val/bpc"] == pytest.approx(metrics["val/loss"] / math.log(2), rel=1e-6)


def test_setup_rejects_a_vocabulary_of_another_size(tmp_path: Path) -> None:
    """A 65-symbol model on a 10-symbol text stops at setup, naming model.vocab_size."""
    text = tmp_path / "tiny.txt"
    text.write_text("abcdefghij" * 30, encoding="utf-8")
    data = TinyShakespeareDataModule(path=str(text), context_length=8, train_windows_per_epoch=8)
    model = CharLanguageModel(vocab_size=65, context_length=8, d_model=16, n_heads=2)
    trainer = L.Trainer(
        accelerator="cpu", logger=False, enable_progress_bar=False, enable_checkpointing=False
    )
    with pytest.raises(ValueError, match="model.vocab_size=65 but the data has 10"):
        trainer.validate(model, datamodule=data, verbose=False)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"vocab_size": 0}, "model.vocab_size"),
        ({"d_model": 30, "n_heads": 4}, "model.d_model"),
        ({"n_layers": 0}, "model.n_layers"),
        ({"dropout": 1.0}, "model.dropout"),
    ],
)
def test_bad_arguments_name_the_field(kwargs: dict, field: str) -> None:
    """Bad vocab_size, d_model/n_heads, n_layers or dropout raise naming model.<field>."""
    with pytest.raises(ValueError, match=field):
        CharLanguageModel(**kwargs)


class MSAMCharLM(CharLanguageModel):
    """The char LM with m-SAM (micro-batches of 2, SGD lr 0.1, rho 0.05), as a config gives it."""

    def configure_optimizers(self) -> torch.optim.Optimizer:
        from optiforge.optimizers import MSAM

        return MSAM(self.parameters(), torch.optim.SGD, rho=0.05, micro_batch_size=2, lr=0.1)


def flat_loss(net: CharTransformer, ids: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean next-character cross-entropy over every character of the windows."""
    return torch.nn.functional.cross_entropy(net(ids).flatten(0, 1), targets.flatten())


def test_msam_step_through_lightning_is_the_hand_written_micro_batch_update() -> None:
    """One Lightning step of m-SAM on a batch of 4 windows equals, parameter by parameter, the
    update written out: for each micro-batch of 2, ascend rho along its own normalized gradient
    and take its gradient there; SGD with the mean of the two."""
    from optiforge.callbacks import OptimizerAdapter

    ids, targets = repeated_string_batch()
    ids, targets = ids[:4], targets[:4]
    torch.manual_seed(0)
    model = MSAMCharLM(vocab_size=7, context_length=12, d_model=16, n_heads=2, n_layers=1)
    expected = [p.detach().clone() for p in model.parameters()]
    reference = CharTransformer(
        vocab_size=7, context_length=12, d_model=16, n_heads=2, n_layers=1, dropout=0.0
    )
    reference.load_state_dict(model.net.state_dict())
    params = list(reference.parameters())
    descent = [torch.zeros_like(p) for p in params]
    for rows in (slice(0, 2), slice(2, 4)):
        grads = torch.autograd.grad(flat_loss(reference, ids[rows], targets[rows]), params)
        norm = torch.sqrt(sum((g**2).sum() for g in grads))
        with torch.no_grad():
            for p, g in zip(params, grads, strict=True):
                p.add_(0.05 * g / norm)
        perturbed = torch.autograd.grad(flat_loss(reference, ids[rows], targets[rows]), params)
        with torch.no_grad():
            for p, g, h, d in zip(params, grads, perturbed, descent, strict=True):
                p.sub_(0.05 * g / norm)
                d.add_(h / 2)
    expected = [e - 0.1 * d for e, d in zip(expected, descent, strict=True)]

    trainer = L.Trainer(
        accelerator="cpu",
        max_steps=1,
        logger=False,
        enable_progress_bar=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        callbacks=[OptimizerAdapter()],
    )
    trainer.fit(model, DataLoader(TensorDataset(ids, targets), batch_size=4))
    for p, e in zip(model.parameters(), expected, strict=True):
        torch.testing.assert_close(p.detach(), e, rtol=1e-5, atol=1e-6)
