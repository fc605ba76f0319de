"""Morph: a mixture of conditional VAEs of good QoSD solutions, guided by an energy model.

Condition: Forge's GNN (edge states, graph embedding), frozen; loaded from `forge_weights`
(a state dict written by `save_forge_weights`, or a Lightning checkpoint), or left untrained
when None (the pipeline stays feasible, only weaker). Data: per training instance, the
`SolutionSet` of Forge's proposals and their PPS repairs (built on first use).
Loss per batch:
- energy: MSE of E(raw) and E(repaired) against the log budget ratio;
- VAE: -sum_s w_s * bound(repaired_s), w = softmax(-E(repaired) / guidance_temperature) over
  the instance's solutions (the energy picks which solutions the generator should model),
  estimated by drawing `solutions_per_step` solutions per graph with probabilities w;
- guidance: energy_weight * mean E(sigmoid(decoded prior samples)), with the energy's
  parameters frozen for this term, so it moves the decoder, not the energy.
Test: `num_test_samples` prior samples per graph plus Forge's own stress, each repaired by
PPS; the cheapest feasible one is the answer (so Morph is never worse than Forge).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor
from torch.func import functional_call
from torch_geometric.data import Batch

from optiforge.lightning_modules.hephaestus.conditional_vae import MixtureConditionalVAE
from optiforge.lightning_modules.hephaestus.energy_model import SolutionEnergy
from optiforge.lightning_modules.hephaestus.forge import Forge
from optiforge.lightning_modules.hephaestus.frozen_phase import load_frozen_phase
from optiforge.lightning_modules.hephaestus.phase import HephaestusPhase, Solver
from optiforge.lightning_modules.hephaestus.predictive_path_stressing import (
    predictive_path_stressing,
)
from optiforge.lightning_modules.hephaestus.solution_bank import SolutionSet, build_solution_set
from optiforge.problems.qosd.instance import QoSDInstance


def best_repair(instance: QoSDInstance, stresses: np.ndarray, greedy: np.ndarray) -> np.ndarray:
    """Cheapest PPS repair among the rows of `stresses` [S, E] (each feasible)."""
    repaired = [predictive_path_stressing(instance, s, greedy) for s in stresses]
    return min(repaired, key=lambda x: x.sum())


class Morph(HephaestusPhase):
    """Args:
    forge_weights: Forge state dict / checkpoint (None: untrained Forge encoder).
    forge_hidden / forge_layers: Forge's GNN size (must match the weights).
    latent / components / hidden: VAE latent size, mixture size, MLP width.
    samples_per_instance: solutions per training instance in the bank (>= 2).
    solutions_per_step: bank solutions drawn per graph and step (by the energy weights).
    noise_scale: std of the proposal noise around Forge's stress.
    guidance_temperature: softmax temperature of the energy weights.
    energy_weight: weight of the guidance term. num_test_samples: prior samples per test graph.
    lr: Adam learning rate.
    """

    def __init__(
        self,
        forge_weights: str | None = None,
        forge_hidden: int = 64,
        forge_layers: int = 3,
        latent: int = 16,
        components: int = 4,
        hidden: int = 64,
        samples_per_instance: int = 8,
        solutions_per_step: int = 2,
        noise_scale: float = 0.2,
        guidance_temperature: float = 0.05,
        energy_weight: float = 0.1,
        num_test_samples: int = 16,
        lr: float = 1e-3,
    ) -> None:
        super().__init__()
        if samples_per_instance < 2 or num_test_samples < 1 or solutions_per_step < 1:
            raise ValueError(
                "samples_per_instance must be >= 2, num_test_samples and solutions_per_step "
                f">= 1, got {samples_per_instance}, {num_test_samples}, {solutions_per_step}"
            )
        for name, value in (
            ("noise_scale", noise_scale),
            ("guidance_temperature", guidance_temperature),
            ("lr", lr),
        ):
            if not value > 0:
                raise ValueError(f"{name} must be > 0, got {value}")
        self.save_hyperparameters()
        self.forge = load_frozen_phase(
            Forge,
            "model.forge_weights",
            forge_weights,
            hidden=forge_hidden,
            num_layers=forge_layers,
        )
        edge_dim, graph_dim = 3 * forge_hidden, forge_hidden
        self.vae = MixtureConditionalVAE(edge_dim, graph_dim, latent, components, hidden)
        self.energy = SolutionEnergy(edge_dim, graph_dim, hidden)
        self.bank: dict[str, SolutionSet] = {}
        self.rng = np.random.default_rng(0)

    def condition(self, batch: Batch) -> tuple[Tensor, Tensor, Tensor]:
        """Frozen Forge encoding: (edge states [E, C], graph embedding [B, H], edge batch [E])."""
        with torch.no_grad():
            _, edge_state, graph = self.forge.gnn(
                batch.x, batch.edge_index, batch.edge_attr, batch.batch
            )
        return edge_state, graph, batch.batch[batch.edge_index[0]]

    def solution_sets(self, batch: Batch) -> list[SolutionSet]:
        """The bank entries of the batch's graphs (built on first use)."""
        missing = [i for i, inst in enumerate(batch.instance) if inst.name not in self.bank]
        if missing:
            predicted = self.forge.predicted_stress(batch)
            labels = Forge.split_labels(batch)
            for i in missing:
                self.bank[batch.instance[i].name] = build_solution_set(
                    batch.instance[i],
                    predicted[i],
                    labels[i],
                    self.hparams.samples_per_instance,
                    self.hparams.noise_scale,
                    self.rng,
                )
        return [self.bank[inst.name] for inst in batch.instance]

    def losses(self, batch: Batch) -> dict[str, Tensor]:
        edge_state, graph, edge_batch = self.condition(batch)
        sets = self.solution_sets(batch)
        device = graph.device
        raw = torch.from_numpy(np.concatenate([s.raw for s in sets], axis=1)).to(device)  # [S, E]
        repaired = torch.from_numpy(np.concatenate([s.repaired for s in sets], axis=1)).to(device)
        log_ratio = torch.from_numpy(np.stack([s.log_ratio for s in sets], axis=1)).to(device)
        energy_repaired = self.energy(edge_state, graph, repaired, edge_batch)
        energy_loss = F.mse_loss(
            self.energy(edge_state, graph, raw, edge_batch), log_ratio
        ) + F.mse_loss(energy_repaired, log_ratio)
        weights = torch.softmax(-energy_repaired.detach() / self.hparams.guidance_temperature, 0)
        # draw solutions_per_step solutions per graph with the energy weights: the mean bound
        # of the draws estimates the weighted bound without decoding every bank entry
        drawn = torch.multinomial(weights.T, self.hparams.solutions_per_step, True).T  # [m, B]
        edges = torch.arange(repaired.shape[1], device=repaired.device)
        bounds = torch.stack(
            [
                self.vae.mixture_bound(
                    edge_state, graph, repaired[rows[edge_batch], edges], edge_batch
                )
                for rows in drawn
            ]
        )  # [m, B]
        edges_per_graph = torch.bincount(edge_batch, minlength=graph.shape[0]).clamp(min=1)
        vae_loss = -(bounds.mean(0) / edges_per_graph).mean()
        logits, _, _ = self.vae.sample(edge_state, graph, edge_batch, 4)
        frozen = {k: v.detach() for k, v in self.energy.named_parameters()}
        guided = functional_call(
            self.energy, frozen, (edge_state, graph, torch.sigmoid(logits), edge_batch)
        )
        guidance = self.hparams.energy_weight * guided.mean()
        total = energy_loss + vae_loss + guidance
        return {"loss": total, "energy": energy_loss, "vae": vae_loss, "guidance": guidance}

    def training_step(self, batch: Batch, batch_idx: int) -> Tensor:
        losses = self.losses(batch)
        for name, value in losses.items():
            self.log(f"train/{name}", value, batch_size=batch.num_graphs, prog_bar=name == "loss")
        return losses["loss"]

    def validation_step(self, batch: Batch, batch_idx: int) -> None:
        losses = self.losses(batch)
        for name, value in losses.items():
            self.log(f"val/{name}", value, batch_size=batch.num_graphs)

    def sampled_stress(self, batch: Batch, num_samples: int) -> list[np.ndarray]:
        """Prior samples per graph: [S, E_graph] stress arrays, in batch order. Drawn with a
        fixed seed, so the same weights and batch give the same samples (Refine reuses them
        and is then never above Morph)."""
        edge_state, graph, edge_batch = self.condition(batch)
        generator = torch.Generator().manual_seed(0)
        with torch.no_grad():
            logits, _, _ = self.vae.sample(edge_state, graph, edge_batch, num_samples, generator)
        stress = torch.sigmoid(logits).double()
        sizes = torch.bincount(edge_batch, minlength=graph.shape[0]).tolist()
        return [part.cpu().numpy() for part in torch.split(stress, sizes, dim=1)]

    def solvers(self, batch: Batch) -> list[Solver]:
        sampled = self.sampled_stress(batch, self.hparams.num_test_samples)
        forge = self.forge.predicted_stress(batch)
        return [
            partial(best_repair, inst, np.concatenate([f[None], m]))
            for inst, f, m in zip(batch.instance, forge, sampled, strict=True)
        ]

    def configure_optimizers(self) -> torch.optim.Optimizer:
        parameters = [*self.vae.parameters(), *self.energy.parameters()]
        return torch.optim.Adam(parameters, lr=self.hparams.lr)
