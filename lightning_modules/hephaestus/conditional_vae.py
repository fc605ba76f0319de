"""Mixture of conditional VAEs over per-edge solutions, conditioned on the graph.

A solution is the per-edge stress s = x / cap in [0, 1]^E of one instance. Condition: the
edge states [E, C] and graph embedding [B, H] of a graph encoder (Forge's GNN). Component k:
- encoder q_k(z | s, graph): per-edge MLP on [edge state, s_e], mean-pooled per graph, then
  linear heads to the latent mean and log-variance (latent size `latent`);
- decoder p_k(s | z, graph): per-edge MLP on [edge state, z of its graph] -> stress logits
  (Bernoulli likelihood with soft targets, i.e. binary cross-entropy);
- gate pi(k | graph): softmax of an MLP on the graph embedding.
The mixture bound: log p(s) >= logsumexp_k(log pi_k + ELBO_k), ELBO_k = -BCE_k - KL_k with a
standard normal prior per component. Sample weights (the energy model's guidance) scale each
solution's bound in the loss.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from optiforge.problems.seeded_draws import categorical, normal


def per_graph_mean(values: Tensor, edge_batch: Tensor, num_graphs: int) -> Tensor:
    """Mean of per-edge rows [E, D] within each graph -> [B, D]."""
    sums = torch.zeros(num_graphs, values.shape[-1], dtype=values.dtype, device=values.device)
    sums.index_add_(0, edge_batch, values)
    counts = torch.bincount(edge_batch, minlength=num_graphs).clamp(min=1).unsqueeze(-1)
    return sums / counts


def per_graph_sum(values: Tensor, edge_batch: Tensor, num_graphs: int) -> Tensor:
    """Sum of per-edge values [..., E] within each graph -> [..., B]."""
    out = torch.zeros(*values.shape[:-1], num_graphs, dtype=values.dtype, device=values.device)
    return out.index_add_(-1, edge_batch, values)


class MixtureConditionalVAE(nn.Module):
    """Args: edge_dim / graph_dim: condition sizes; latent: z size; components: K; hidden."""

    def __init__(
        self, edge_dim: int, graph_dim: int, latent: int = 16, components: int = 4, hidden: int = 64
    ) -> None:
        super().__init__()
        if min(latent, components, hidden) < 1:
            raise ValueError(
                f"latent, components and hidden must be >= 1, got {latent}, {components}, {hidden}"
            )
        self.latent, self.components = latent, components
        # first layers split into an edge-state part (computed once per batch) and a part
        # for the stress / latent code, so per-sample work skips the wide edge state
        self.encoder_state = nn.Linear(edge_dim, hidden)
        self.encoder_stress = nn.Linear(1, hidden, bias=False)
        self.encoder_edge = nn.Sequential(nn.SiLU(), nn.Linear(hidden, components * hidden))
        self.encoder_head = nn.Linear(hidden, 2 * latent)
        self.decoder_state = nn.Linear(edge_dim, hidden)
        self.decoder_code = nn.Linear(latent + components, hidden, bias=False)
        self.decoder = nn.Sequential(
            nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1)
        )
        self.gate = nn.Sequential(
            nn.Linear(graph_dim, hidden), nn.SiLU(), nn.Linear(hidden, components)
        )

    def encode(
        self, edge_state: Tensor, stress: Tensor, edge_batch: Tensor, num_graphs: int
    ) -> tuple[Tensor, Tensor]:
        """Latent mean and log-variance per component: [K, B, latent] each."""
        first = self.encoder_state(edge_state) + self.encoder_stress(stress.unsqueeze(-1))
        per_edge = self.encoder_edge(first)
        pooled = per_graph_mean(per_edge, edge_batch, num_graphs)  # [B, K * hidden]
        pooled = pooled.view(num_graphs, self.components, -1).transpose(0, 1)
        mean, log_var = self.encoder_head(torch.tanh(pooled)).chunk(2, dim=-1)
        return mean, log_var.clamp(-8.0, 4.0)

    def decode(
        self, edge_state: Tensor, z: Tensor, component: Tensor, edge_batch: Tensor
    ) -> Tensor:
        """Stress logits [..., E] for latents z [..., B, latent] of components [..., B]."""
        one_hot = F.one_hot(component, self.components).to(z)
        code = self.decoder_code(torch.cat([z, one_hot], dim=-1))[..., edge_batch, :]
        return self.decoder(self.decoder_state(edge_state) + code).squeeze(-1)

    def log_gate(self, graph: Tensor) -> Tensor:
        """log pi(k | graph): [B, K]."""
        return F.log_softmax(self.gate(graph), dim=-1)

    def mixture_bound(
        self, edge_state: Tensor, graph: Tensor, stress: Tensor, edge_batch: Tensor
    ) -> Tensor:
        """Per-graph lower bound on log p(stress | graph): [B] (one reparameterized draw)."""
        num_graphs = graph.shape[0]
        mean, log_var = self.encode(edge_state, stress, edge_batch, num_graphs)
        z = mean + torch.randn_like(mean) * torch.exp(0.5 * log_var)  # [K, B, latent]
        component = torch.arange(self.components, device=mean.device)
        component = component.unsqueeze(-1).expand(-1, num_graphs)
        logits = self.decode(edge_state, z, component, edge_batch)  # [K, E]
        target = stress.expand_as(logits)
        reconstruction = -per_graph_sum(
            F.binary_cross_entropy_with_logits(logits, target, reduction="none"),
            edge_batch,
            num_graphs,
        )  # [K, B]
        kl = 0.5 * (mean.square() + log_var.exp() - 1.0 - log_var).sum(-1)  # [K, B]
        return torch.logsumexp(self.log_gate(graph).T + reconstruction - kl, dim=0)

    def sample(
        self,
        edge_state: Tensor,
        graph: Tensor,
        edge_batch: Tensor,
        num_samples: int,
        generator: torch.Generator | None = None,
    ) -> tuple[Tensor, Tensor, Tensor]:
        """(stress logits [S, E], z [S, B, latent], component [S, B]) from the prior."""
        num_graphs = graph.shape[0]
        gate = self.log_gate(graph).exp()
        component = categorical(gate, num_samples, generator).T
        shape = (num_samples, num_graphs, self.latent)
        z = normal(shape, generator, graph.device, dtype=graph.dtype)
        return self.decode(edge_state, z, component, edge_batch), z, component
