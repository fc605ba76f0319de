"""Refine: a latent-space RL agent with a differentiable reward, and a final PPS repair.

Morph (with its Forge encoder) is loaded from `morph_weights` (state dict or Lightning
checkpoint; None: untrained) and frozen. The agent is a Gaussian policy over Morph's latent
space conditioned on the graph embedding, pi(z | graph) = N(mu(graph), diag sigma(graph)^2);
components come from Morph's gate. An action z decodes to a perturbation x = sigmoid(decoder)
* cap, whose reward is `smooth_reward` (budget plus a smooth violation over the instance's pool
of shortest paths, which grows with every scored point). Since the reward is differentiable
in z, the policy is trained with the pathwise (reparameterized) gradient of the expected
reward, plus an entropy bonus to keep exploring.

Test, per instance: `search_particles` latents drawn from the policy are improved by
`search_steps` Adam steps on the same reward (progressively better solutions); every
`repair_every` steps each particle's x is repaired by PPS, and the cheapest feasible solution
seen (including Forge's and Morph's proposals) is returned. Every candidate is feasible by the
PPS guarantee, so Refine never returns an infeasible point and is never worse than Morph.
Last, `descent_steps` steps of `descend_reward` (the same reward, descended directly in
perturbation space from that solution, repaired by PPS every 25 steps) leave the
decoder's manifold; 0 turns this stage off.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import torch
from torch import Tensor, nn
from torch_geometric.data import Batch

from optiforge.lightning_modules.hephaestus.differentiable_reward import PathPool, smooth_reward
from optiforge.lightning_modules.hephaestus.frozen_phase import load_frozen_phase
from optiforge.lightning_modules.hephaestus.morph import Morph, best_repair
from optiforge.lightning_modules.hephaestus.phase import HephaestusPhase, Solver
from optiforge.lightning_modules.hephaestus.reward_descent import descend_reward
from optiforge.problems.qosd.instance import QoSDInstance


class LatentPolicy(nn.Module):
    """Graph embedding [B, H] -> Gaussian mean and log-std over the latent [B, latent]."""

    def __init__(self, graph_dim: int, latent: int, hidden: int) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(graph_dim, hidden), nn.SiLU(), nn.Linear(hidden, 2 * latent)
        )

    def forward(self, graph: Tensor) -> tuple[Tensor, Tensor]:
        mean, log_std = self.net(graph).chunk(2, dim=-1)
        return mean, log_std.clamp(-5.0, 1.0)


class Refine(HephaestusPhase):
    """Args:
    morph_weights: Morph state dict / checkpoint (None: untrained Morph).
    forge_hidden / forge_layers / latent / components / hidden: Morph's sizes.
    policy_hidden: policy MLP width. samples: actions per graph per training step.
    penalty / temperature: reward's violation weight and smoothing (units of T).
    entropy_weight: entropy bonus. lr: Adam learning rate of the policy.
    search_particles / search_steps / search_lr / repair_every: the test-time search.
    descent_steps / descent_lr: the final reward descent in perturbation space (0 steps: off).
    """

    def __init__(
        self,
        morph_weights: str | None = None,
        forge_hidden: int = 64,
        forge_layers: int = 3,
        latent: int = 16,
        components: int = 4,
        hidden: int = 64,
        policy_hidden: int = 64,
        samples: int = 8,
        penalty: float = 10.0,
        temperature: float = 0.02,
        entropy_weight: float = 0.01,
        lr: float = 1e-3,
        search_particles: int = 8,
        search_steps: int = 40,
        search_lr: float = 0.05,
        repair_every: int = 10,
        descent_steps: int = 100,
        descent_lr: float = 0.05,
    ) -> None:
        super().__init__()
        for name, value in (
            ("samples", samples),
            ("search_particles", search_particles),
            ("search_steps", search_steps),
            ("repair_every", repair_every),
        ):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if not isinstance(descent_steps, int) or descent_steps < 0:
            raise ValueError(f"descent_steps must be a non-negative integer, got {descent_steps!r}")
        for name, value in (
            ("penalty", penalty),
            ("temperature", temperature),
            ("lr", lr),
            ("search_lr", search_lr),
            ("descent_lr", descent_lr),
        ):
            if not value > 0:
                raise ValueError(f"{name} must be > 0, got {value}")
        self.save_hyperparameters()
        self.morph = load_frozen_phase(
            Morph,
            "model.morph_weights",
            morph_weights,
            forge_hidden=forge_hidden,
            forge_layers=forge_layers,
            latent=latent,
            components=components,
            hidden=hidden,
        )
        self.policy = LatentPolicy(forge_hidden, latent, policy_hidden)
        self.pools: dict[str, PathPool] = {}

    def pool(self, instance: QoSDInstance) -> PathPool:
        if instance.name not in self.pools:
            self.pools[instance.name] = PathPool(instance)
            self.pools[instance.name].add_shortest_paths(np.zeros(instance.num_edges))
        return self.pools[instance.name]

    def decode(self, batch: Batch, z: Tensor, component: Tensor) -> list[Tensor]:
        """Perturbations x [S, E_graph] (float64, in the box) per graph of the batch."""
        edge_state, _, edge_batch = self.morph.condition(batch)
        logits = self.morph.vae.decode(edge_state, z, component, edge_batch)
        x = torch.sigmoid(logits).double() * batch.cap.double()
        sizes = torch.bincount(edge_batch, minlength=batch.num_graphs).tolist()
        return list(torch.split(x, sizes, dim=-1))

    def rewards(self, batch: Batch, xs: list[Tensor]) -> Tensor:
        """Smooth rewards [S, B]; every scored point's shortest paths join its pool first."""
        out = []
        for instance, x in zip(batch.instance, xs, strict=True):
            pool = self.pool(instance)
            for row in x.detach().cpu().numpy():
                pool.add_shortest_paths(row)
            out.append(smooth_reward(pool, x, self.hparams.penalty, self.hparams.temperature))
        return torch.stack(out, dim=-1)

    def sample_components(self, batch: Batch, num: int) -> Tensor:
        _, graph, _ = self.morph.condition(batch)
        return torch.multinomial(self.morph.vae.log_gate(graph).exp(), num, True).T

    def training_step(self, batch: Batch, batch_idx: int) -> Tensor:
        _, graph, _ = self.morph.condition(batch)
        mean, log_std = self.policy(graph)
        samples = self.hparams.samples
        z = mean + log_std.exp() * torch.randn(samples, *mean.shape, device=mean.device)
        reward = self.rewards(batch, self.decode(batch, z, self.sample_components(batch, samples)))
        entropy = (log_std + 0.5 * math.log(2 * math.pi * math.e)).sum(-1).mean()
        loss = -reward.mean() - self.hparams.entropy_weight * entropy
        self.log("train/loss", loss, batch_size=batch.num_graphs, prog_bar=True)
        self.log("train/reward", reward.mean(), batch_size=batch.num_graphs)
        return loss

    def validation_step(self, batch: Batch, batch_idx: int) -> None:
        _, graph, _ = self.morph.condition(batch)
        mean, _ = self.policy(graph)
        component = self.sample_components(batch, 1)
        reward = self.rewards(batch, self.decode(batch, mean.unsqueeze(0), component))
        self.log("val/reward", reward.mean(), batch_size=batch.num_graphs)

    def search(self, batch: Batch) -> list[np.ndarray]:
        """Per graph, the stress rows [R, E] repaired during the latent search."""
        particles = self.hparams.search_particles
        with torch.inference_mode(False), torch.enable_grad():
            batch = batch.clone()
            _, graph, _ = self.morph.condition(batch)
            mean, log_std = self.policy(graph)
            noise = torch.randn(particles, *mean.shape, device=mean.device)
            z = (mean + log_std.exp() * noise).detach()
            z.requires_grad_(True)
            component = self.sample_components(batch, particles)
            optimizer = torch.optim.Adam([z], lr=self.hparams.search_lr)
            kept: list[list[np.ndarray]] = [[] for _ in batch.instance]
            for step in range(1, self.hparams.search_steps + 1):
                xs = self.decode(batch, z, component)
                loss = -self.rewards(batch, xs).sum()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                if step % self.hparams.repair_every == 0 or step == self.hparams.search_steps:
                    for rows, x, instance in zip(kept, xs, batch.instance, strict=True):
                        rows.append(x.detach().cpu().numpy() / np.maximum(instance.cap, 1e-12))
        return [np.clip(np.concatenate(rows), 0.0, 1.0) for rows in kept]

    def solvers(self, batch: Batch) -> list[Solver]:
        refined = self.search(batch)
        sampled = self.morph.sampled_stress(batch, self.morph.hparams.num_test_samples)
        forge = self.morph.forge.predicted_stress(batch)
        return [
            partial(self.finish, inst, np.concatenate([f[None], m, r]))
            for inst, f, m, r in zip(batch.instance, forge, sampled, refined, strict=True)
        ]

    def finish(
        self, instance: QoSDInstance, stresses: np.ndarray, greedy: np.ndarray
    ) -> np.ndarray:
        """Cheapest PPS repair of the stress rows, then the reward descent from it."""
        x = best_repair(instance, stresses, greedy)
        if self.hparams.descent_steps == 0:
            return x
        return descend_reward(
            instance,
            x,
            steps=self.hparams.descent_steps,
            lr=self.hparams.descent_lr,
            penalty=self.hparams.penalty,
            temperature=self.hparams.temperature,
            pool=self.pool(instance),
        )

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.policy.parameters(), lr=self.hparams.lr)
