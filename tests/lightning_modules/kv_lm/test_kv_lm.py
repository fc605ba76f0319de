"""The Llama char LM: its q/k/v capture, argument checks, training signal and weights files."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from optiforge.lightning_modules.classifier import Classifier
from optiforge.lightning_modules.kv_lm.model import LlamaCharNet, llama_config
from optiforge.lightning_modules.kv_lm.module import LlamaCharLanguageModel
from optiforge.lightning_modules.kv_lm.weights import SHIPPED, export_weights, load_weights
from optiforge.lightning_modules.weights_file import save_weights_file


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
    """export -> load gives the same logits and records the vocabulary and score; a missing or
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
            "callbacks": {"ModelCheckpoint": {"best_model_score": torch.tensor(2.5)}},
            "TinyShakespeareDataModule": {"vocab": "ab"},
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
