"""scion_param_groups: roles (input, hidden, output, vector), norms, scales, tied weights."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from optiforge.optimizers import ClippedScion, scion_param_groups


def cnn() -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Conv2d(4, 8, 3), nn.Flatten(), nn.Linear(32, 10)
    )


class TinyLM(nn.Module):
    """Embedding -> Linear -> LayerNorm -> head, the layout of a language model."""

    def __init__(self, tie: bool = False) -> None:
        super().__init__()
        self.embed = nn.Embedding(11, 6)
        self.hidden = nn.Linear(6, 6)
        self.norm = nn.LayerNorm(6)
        self.head = nn.Linear(6, 11, bias=False)
        if tie:
            self.head.weight = self.embed.weight

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.norm(self.hidden(self.embed(tokens))))


def by_name(groups: list[dict]) -> dict[str, dict]:
    return {group["name"]: group for group in groups}


def ids(tensors: list[torch.Tensor]) -> set[int]:
    return {id(t) for t in tensors}


def test_cnn_roles_and_default_norms() -> None:
    """First conv -> input Spectral, second conv -> hidden Spectral, head -> output Sign,
    biases -> vector BiasRMS; every parameter lands in exactly one group."""
    model = cnn()
    groups = by_name(scion_param_groups(model, hidden_scale=8.0, output_scale=128.0))
    assert ids(groups["input"]["params"]) == {id(model[0].weight)}
    assert ids(groups["hidden"]["params"]) == {id(model[2].weight)}
    assert ids(groups["output"]["params"]) == {id(model[4].weight)}
    assert ids(groups["vector"]["params"]) == ids([model[0].bias, model[2].bias, model[4].bias])
    norms = {name: group["norm"] for name, group in groups.items()}
    assert norms == {
        "input": "Spectral",
        "hidden": "Spectral",
        "output": "Sign",
        "vector": "BiasRMS",
    }
    assert groups["hidden"]["scale"] == 8.0 and groups["output"]["scale"] == 128.0
    placed = [id(p) for group in groups.values() for p in group["params"]]
    assert sorted(placed) == sorted(id(p) for p in model.parameters())


def test_language_model_roles_with_sign_input() -> None:
    """The embedding is the input (Sign for LMs), LayerNorm gains and biases are vectors."""
    model = TinyLM()
    groups = by_name(scion_param_groups(model, input_norm="Sign"))
    assert ids(groups["input"]["params"]) == {id(model.embed.weight)}
    assert groups["input"]["norm"] == "Sign" and groups["input"]["norm_kwargs"] == {}
    assert ids(groups["hidden"]["params"]) == {id(model.hidden.weight)}
    assert ids(groups["output"]["params"]) == {id(model.head.weight)}
    vector = [model.hidden.bias, model.norm.weight, model.norm.bias]
    assert ids(groups["vector"]["params"]) == ids(vector)


def test_colnorm_embedding_input_is_transposed() -> None:
    """ColNorm on an embedding table normalizes its rows: norm_kwargs transpose=True."""
    groups = by_name(scion_param_groups(TinyLM(), input_norm="ColNorm"))
    assert groups["input"]["norm_kwargs"] == {"transpose": True}
    assert by_name(scion_param_groups(cnn(), input_norm="ColNorm"))["input"]["norm_kwargs"] == {}


def test_tied_weight_is_placed_once_as_output() -> None:
    """An embedding tied to the head is stepped once, with the output norm."""
    model = TinyLM(tie=True)
    groups = by_name(scion_param_groups(model))
    assert "input" not in groups
    assert ids(groups["output"]["params"]) == {id(model.embed.weight)}


def test_single_linear_is_the_output_and_frozen_params_are_skipped() -> None:
    """A lone Linear (logistic regression) gets the output norm; requires_grad=False is left out."""
    model = nn.Linear(5, 3)
    model.bias.requires_grad_(False)
    groups = by_name(scion_param_groups(model))
    assert set(groups) == {"output"}
    assert ids(groups["output"]["params"]) == {id(model.weight)}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"hidden_norm": "nuclear"}, "hidden_norm: norm must be one of"),
        ({"output_norm": "sgn"}, "output_norm: norm must be one of"),
        ({"input_scale": 0.0}, "input_scale must be > 0, got 0.0"),
        ({"vector_scale": -1.0}, "vector_scale must be > 0"),
    ],
)
def test_bad_arguments_raise_naming_the_field(kwargs: dict, message: str) -> None:
    """Unknown norm names and non-positive scales raise a ValueError naming the argument."""
    with pytest.raises(ValueError, match=message):
        scion_param_groups(cnn(), **kwargs)


def test_groups_drive_clipped_scion() -> None:
    """The groups construct ClippedScion and one step moves every parameter."""
    torch.manual_seed(0)
    model = TinyLM()
    optimizer = ClippedScion(scion_param_groups(model, input_norm="Sign"), lr=0.1, rho=1.0)
    before = [p.detach().clone() for p in model.parameters()]

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        logits = model(torch.arange(11))
        loss = nn.functional.cross_entropy(logits, torch.arange(11).roll(1))
        loss.backward()
        return loss

    optimizer.step(closure)
    assert all(not torch.equal(p, b) for p, b in zip(model.parameters(), before, strict=True))
