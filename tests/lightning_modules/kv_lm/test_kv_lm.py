"""The Llama char LM: its q/k/v capture, argument checks, training signal and weights files."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

from optiforge.callbacks.needle_retrieval import greedy_answers
from optiforge.datamodules import CopyingDataModule
from optiforge.lightning_modules.classifier import Classifier
from optiforge.lightning_modules.kv_lm.model import LlamaCharNet, llama_config
from optiforge.lightning_modules.kv_lm.module import LlamaCharLanguageModel, resolve_weights
from optiforge.lightning_modules.kv_lm.weights import (
    NEEDLE,
    SHIPPED,
    export_weights,
    load_weights,
)
from optiforge.lightning_modules.weights_file import save_weights_file
from tests.trainers import quiet_trainer


def test_captured_qkv_reproduce_the_models_attention_weights() -> None:
    """softmax(q k^T / sqrt(d) + causal mask) from the captured q, k equals the attention
    weights the eager model reports, in every layer."""
    torch.manual_seed(0)
    net = LlamaCharNet(65, 64, 32, 2, 2, 48, "eager").eval()
    ids = torch.randint(65, (2, 30))
    reported = net.llama(input_ids=ids, output_attentions=True).attentions
    future = torch.ones(30, 30, dtype=torch.bool).triu(1)
    for (q, k, _), weights in zip(net.attention_inputs(ids), reported, strict=True):
        logits = (q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])).masked_fill(future, -1e9)
        assert torch.allclose(torch.softmax(logits, -1), weights, atol=1e-6)


def test_bad_architecture_names_the_argument() -> None:
    """d_model not a multiple of n_heads, and a zero size, fail naming the field."""
    with pytest.raises(ValueError, match="model.d_model=30 must be a multiple of model.n_heads=4"):
        llama_config(65, 64, 30, 4, 2, 64)
    with pytest.raises(ValueError, match="model.n_layers must be >= 1, got 0"):
        llama_config(65, 64, 32, 4, 0, 64)


def test_a_few_steps_learn_a_repeating_text() -> None:
    """Twenty AdamW steps on 'abcabc...' bring the loss from about ln 65 to below 1 nat."""
    torch.manual_seed(0)
    model = LlamaCharLanguageModel(65, 64, 32, 2, 2, 48)
    ids = torch.arange(3).repeat(2, 22)
    batch = (ids[:, :-1], ids[:, 1:])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    first = model.loss(batch).item()
    for _ in range(20):
        optimizer.zero_grad()
        model.loss(batch).backward()
        optimizer.step()
    assert abs(first - math.log(65)) < 0.5 and model.loss(batch).item() < 1.0


def test_weights_round_trip_and_bad_files(tmp_path: Path) -> None:
    """export -> load gives the same logits and records the vocabulary (of any char datamodule)
    and the val/bpc score (not another monitor's); a missing or
    foreign file, or one of another model class, is a ValueError naming the weights."""
    torch.manual_seed(0)
    model = LlamaCharLanguageModel(65, 64, 32, 2, 2, 48)
    checkpoint = tmp_path / "model.ckpt"
    torch.save(
        {
            "state_dict": model.state_dict(),
            "hyper_parameters": {**model.hparams, "_class_path": "x"},
            "epoch": 3,
            "global_step": 40,
            "callbacks": {
                "ModelCheckpoint{'monitor': 'val/bpc'}": {
                    "monitor": "val/bpc",
                    "best_model_score": torch.tensor(2.5),
                },
                "ModelCheckpoint{'monitor': 'val/needle_exact_match'}": {
                    "monitor": "val/needle_exact_match",
                    "best_model_score": torch.tensor(0.75),
                },
            },
            "CopyingDataModule": {"vocab": "ab"},
        },
        checkpoint,
    )
    export_weights(checkpoint, tmp_path / "weights.pt")
    loaded, card = load_weights(tmp_path / "weights.pt")
    ids = torch.randint(65, (1, 20))
    assert torch.equal(loaded(ids), model.eval()(ids))
    assert card["vocab"] == "ab" and card["val_bpc"] == 2.5 and card["global_step"] == 40
    with pytest.raises(ValueError, match="weights: no file"):
        load_weights(tmp_path / "none.pt")
    torch.save({"state_dict": {}}, tmp_path / "foreign.pt")
    with pytest.raises(ValueError, match="foreign.pt: not an optiforge-weights file"):
        load_weights(tmp_path / "foreign.pt")
    classifier = tmp_path / "classifier.pt"
    save_weights_file(classifier, Classifier, {}, Classifier().state_dict(), card)
    with pytest.raises(ValueError, match="holds a Classifier, this model is a LlamaCharLanguage"):
        load_weights(classifier)


@pytest.mark.skipif(not SHIPPED.is_file(), reason="no shipped weights")
def test_shipped_model_matches_its_card_and_attends_unevenly() -> None:
    """The shipped LM's loss on 16 validation windows is within 0.15 nats of its recorded
    validation loss, and its attention entropy is well below the uniform log n."""
    from optiforge.datamodules.tinyshakespeare import TinyShakespeareDataModule

    model, card = load_weights()
    data = TinyShakespeareDataModule(context_length=512)
    data.setup()
    windows = data.splits["val"]
    picks = torch.linspace(0, len(windows) - 1, 16).long().tolist()
    inputs = torch.stack([windows[i][0] for i in picks])
    targets = torch.stack([windows[i][1] for i in picks])
    with torch.no_grad():
        loss = model.loss((inputs, targets)).item()
        q, k, _ = model.net.attention_inputs(inputs[:2])[1]
    assert abs(loss - card["val_bpc"] * math.log(2)) < 0.15
    logits = q[..., 256:, :] @ k[..., :256, :].transpose(-1, -2) / math.sqrt(q.shape[-1])
    probs = torch.softmax(logits, -1)
    entropy = -(probs * probs.log()).sum(-1).mean().item()
    assert entropy < 0.8 * math.log(256)


def test_warm_start_loads_the_file_and_is_not_a_hyperparameter(tmp_path: Path) -> None:
    """`weights` copies a file's weights exactly and is not saved with the hyperparameters (an
    exported run stands alone); another architecture is refused naming the field; the shipped
    file is found under its relative name."""
    torch.manual_seed(0)
    source = LlamaCharLanguageModel(65, 64, 32, 2, 2, 48)
    path = tmp_path / "start.pt"
    card = {"training_command": "x", "commit": "x", "data": "x", "results": []}
    save_weights_file(path, LlamaCharLanguageModel, dict(source.hparams), source.state_dict(), card)
    started = LlamaCharLanguageModel(65, 64, 32, 2, 2, 48, weights=str(path))
    for name, value in source.state_dict().items():
        assert torch.equal(started.state_dict()[name], value)
    assert "weights" not in started.hparams
    with pytest.raises(ValueError, match="model.init_args.weights: .*start.pt has n_layers=2"):
        LlamaCharLanguageModel(65, 64, 32, 2, 3, 48, weights=str(path))
    assert resolve_weights("weights/kv_lm/llama_char_tinyshakespeare.pt") == SHIPPED
    assert resolve_weights("weights/kv_lm/none.pt") == Path("weights/kv_lm/none.pt")


class PlainSGD(LlamaCharLanguageModel):
    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.5)


def test_weighted_batches_train_on_each_windows_weighted_mean() -> None:
    """One SGD step on (inputs, targets, weights) moves the weights by the gradient of the mean
    over windows of sum(w * ce) / sum(w), computed here by hand."""
    torch.manual_seed(0)
    model = PlainSGD(65, 16, 32, 2, 1, 48)
    ids = torch.randint(65, (4, 17))
    weights = torch.rand(4, 16) * 3 + 0.5
    reference = PlainSGD(65, 16, 32, 2, 1, 48)
    reference.load_state_dict(model.state_dict())
    ce = F.cross_entropy(reference(ids[:, :-1]).transpose(1, 2), ids[:, 1:], reduction="none")
    loss = ((ce * weights).sum(1) / weights.sum(1)).mean()
    grads = torch.autograd.grad(loss, list(reference.parameters()))
    trainer = quiet_trainer(max_steps=1)
    trainer.fit(model, DataLoader(TensorDataset(ids[:, :-1], ids[:, 1:], weights), batch_size=4))
    for p, q, g in zip(model.parameters(), reference.parameters(), grads, strict=True):
        torch.testing.assert_close(p.detach(), q.detach() - 0.5 * g, rtol=1e-5, atol=1e-6)


def test_shipped_needle_model_retrieves_as_its_card_says() -> None:
    """The fine-tuned LM's greedy answers on the 32 validation needle prompts match the exact
    match its file records (the best `val/needle_exact_match` of its run), far above chance
    (26^-4) and the LM it started from (0 of the first 8)."""
    model, card = load_weights(NEEDLE)
    data = CopyingDataModule(retrieval_tasks=32)
    data.setup()
    prompts, answers = data.retrieval_task("val")
    found = greedy_answers(model, prompts, answers.shape[1], 32)
    exact = (found == answers).all(dim=1).float().mean().item()
    assert exact == pytest.approx(card["needle_exact_match"], abs=1 / 32)
    assert exact >= 0.25
    base, _ = load_weights(SHIPPED)
    assert (greedy_answers(base, prompts[:8], 4, 8) == answers[:8]).all(dim=1).sum() == 0
