"""Heavy-decoder student of MTL-KD (LEHD / BQ-NCO style): one model for all 16 variants.

Light encoder: the teachers' input layout (`features.py`: 7 customer features, 5 depot /
instance features that carry O and L, demands that carry B, windows that carry TW), projected
to d and passed through `encoder_layers` (default 1) attention layers once per instance.

Heavy decoder, at every step and for every state row r:
    tokens  = [c_r ; h_0 ; h_1 ; ... ; h_n]      c_r = W_c [h_current ; context features (6)]
    tokens <- `decoder_layers` pre-norm layers   x <- x + MHA(RMSNorm x), x <- x + FF(RMSNorm x)
    u_j     = w . RMSNorm(token_j)               one score per node token (j = 0 is the depot)
    log pi(j) = log_softmax_j(u_j), u_j = -inf where the env's mask forbids j.
Visited customers are dropped from the tokens (each row's remaining nodes gathered, padded to
the batch's longest and key-masked), so the remaining nodes are re-embedded together with the
current partial-route state at every step, which is what lets a heavy decoder generalize
across sizes (LEHD); a step costs O(L K^2 d) per row with K the nodes still remaining.

Variant attributes reach the model only as features, so an unseen combination of O, B, L, TW is
decoded zero-shot with the same weights.

Public interface (shared with the teachers): `precompute(batch)` encodes once into a cache,
`step(cache, state, mask)` gives log pi [R, N] of one decoding step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from optiforge.lightning_modules.mtlkd.attention_encoder import EncoderLayer
from optiforge.lightning_modules.mtlkd.candidate_restriction import (
    check_candidates,
    nearest_candidates,
)
from optiforge.lightning_modules.mtlkd.features import (
    CONTEXT_FEATURES,
    CUSTOMER_FEATURES,
    DEPOT_FEATURES,
    FeatureScaling,
    check_scaling,
    context_features,
    customer_features,
    depot_features,
)
from optiforge.lightning_modules.mtlkd.rollout import Decode, Rollout, roll_out
from optiforge.problems.vrp import env
from optiforge.problems.vrp.env import VRPState
from optiforge.problems.vrp.instance import VRPBatch

ROWS_PER_CALL = 128  # rows decoded at once when their token counts differ (see `scores`)


@dataclass(frozen=True)
class DecoderRows:
    """What the heavy decoder reads of R state rows: each row's instance (a row of the node
    embeddings), current node, the nodes that enter as tokens [R, N] (True; the depot always)
    and the context features [R, 6]. Rows of several states (steps, or instance subsets with
    `instance` mapped into one embedding tensor) concatenate into one decoder call."""

    instance: Tensor
    current: Tensor
    remaining: Tensor
    context: Tensor

    def index(self, rows: Tensor) -> DecoderRows:
        """The rows `rows` [S] (long indices)."""
        return DecoderRows(
            self.instance[rows], self.current[rows], self.remaining[rows], self.context[rows]
        )

    @staticmethod
    def cat(parts: Sequence[DecoderRows]) -> DecoderRows:
        """The rows of `parts`, in order."""
        return DecoderRows(
            torch.cat([p.instance for p in parts]),
            torch.cat([p.current for p in parts]),
            torch.cat([p.remaining for p in parts]),
            torch.cat([p.context for p in parts]),
        )


class DecoderLayer(nn.Module):
    """Pre-norm self-attention + feed-forward over [R, T, d] with a key mask [R, T]."""

    def __init__(self, dim: int, num_heads: int, ff_dim: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.norm_attention = nn.RMSNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim)
        self.norm_feed_forward = nn.RMSNorm(dim)
        self.feed_forward = nn.Sequential(nn.Linear(dim, ff_dim), nn.ReLU(), nn.Linear(ff_dim, dim))

    def forward(self, x: Tensor, visible: Tensor) -> Tensor:
        r, t, d = x.shape
        qkv = self.qkv(self.norm_attention(x)).view(r, t, 3, self.num_heads, d // self.num_heads)
        q, k, v = qkv.transpose(1, 3).unbind(2)  # [R, M, T, d / M] each
        attended = F.scaled_dot_product_attention(q, k, v, attn_mask=visible[:, None, None])
        x = x + self.out(attended.transpose(1, 2).reshape(r, t, d))
        return x + self.feed_forward(self.norm_feed_forward(x))


class HeavyDecoderPolicy(nn.Module):
    """pi_S(a_t | s_t, G) for every VRP variant; decodes all state rows of a batch at once.

    Args:
        embed_dim: embedding size d.
        encoder_layers: attention layers of the light encoder (0 = linear embedding only).
        decoder_layers: layers of the heavy decoder (LEHD: 6).
        num_heads: attention heads (encoder and decoder).
        ff_dim: feed-forward hidden size.
        feature_scaling: how times and lengths enter the features (`features.FeatureScaling`):
            "raw" instance units (the shipped weights) or "instance" (divided by the
            instance's own horizon and distance limit).
        candidate_k: restrict each step's tokens to the depot and the k nearest unvisited
            customers (`candidate_restriction`); None = every remaining node (LEHD).
        candidate_min_nodes: the restriction applies only to instances of at least this many
            customers (smaller ones, e.g. training at n = 50, decode unrestricted).
    """

    def __init__(
        self,
        embed_dim: int = 128,
        encoder_layers: int = 1,
        decoder_layers: int = 6,
        num_heads: int = 8,
        ff_dim: int = 512,
        feature_scaling: FeatureScaling = "raw",
        candidate_k: int | None = None,
        candidate_min_nodes: int = 200,
    ) -> None:
        super().__init__()
        check_scaling(feature_scaling)
        check_candidates(candidate_k, candidate_min_nodes)
        self.feature_scaling = feature_scaling
        self.candidate_k = candidate_k
        self.candidate_min_nodes = candidate_min_nodes
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim={embed_dim} must be a multiple of num_heads={num_heads}")
        self.embed_depot = nn.Linear(DEPOT_FEATURES, embed_dim)
        self.embed_customers = nn.Linear(CUSTOMER_FEATURES, embed_dim)
        self.encoder = nn.ModuleList(
            EncoderLayer(embed_dim, num_heads, ff_dim, "rms") for _ in range(encoder_layers)
        )
        self.embed_state = nn.Linear(embed_dim + CONTEXT_FEATURES, embed_dim)
        self.decoder = nn.ModuleList(
            DecoderLayer(embed_dim, num_heads, ff_dim) for _ in range(decoder_layers)
        )
        self.norm_out = nn.RMSNorm(embed_dim)
        self.score = nn.Linear(embed_dim, 1)

    def encode(self, batch: VRPBatch) -> Tensor:
        """Node embeddings [B, N, d] (depot token at row 0)."""
        scaling = self.feature_scaling
        customers = self.embed_customers(customer_features(batch, scaling)[:, 1:])
        h = torch.cat([self.embed_depot(depot_features(batch, scaling)), customers], 1)
        for layer in self.encoder:
            h = layer(h)
        return h

    def precompute(self, batch: VRPBatch) -> Tensor:
        """Encode `batch` once; the cache of every `step` is the node embeddings [B, N, d]
        (the heavy decoder recomputes everything else at each step)."""
        return self.encode(batch)

    def rows(self, state: VRPState, mask: Tensor, forced: Tensor | None = None) -> DecoderRows:
        """What the decoder reads of every row of `state` (see `step`)."""
        remaining = ~state.visited  # the depot column is always True
        if self.candidate_k is not None and state.batch.num_nodes > self.candidate_min_nodes:
            remaining = nearest_candidates(state, mask, self.candidate_k, forced)
        context = context_features(state, self.feature_scaling)
        return DecoderRows(state.instance, state.current, remaining, context)

    def scores(self, h: Tensor, rows: DecoderRows, mask: Tensor) -> Tensor:
        """log pi [R, N] of `rows` (instances indexing `h`) under the legal `mask` [R, N].

        Rows whose token counts differ widely (the steps of a distillation window) are decoded
        in groups of `ROWS_PER_CALL` rows of similar counts, each padded to its own longest row
        rather than all to the longest one."""
        if rows.instance.numel() <= ROWS_PER_CALL:
            return self.decode_rows(h, rows, mask)
        order = torch.argsort(rows.remaining.sum(1))
        groups = [
            self.decode_rows(h, rows.index(group), mask[group])
            for group in order.split(ROWS_PER_CALL)
        ]
        return torch.cat(groups)[torch.argsort(order)]

    def decode_rows(self, h: Tensor, rows: DecoderRows, mask: Tensor) -> Tensor:
        """`scores` in one decoder call, every row padded to the longest."""
        remaining = rows.remaining
        counts = remaining.sum(1)
        width = int(counts.max())
        order = torch.argsort(remaining.to(torch.int8), dim=1, descending=True, stable=True)
        order = order[:, :width]  # [R, K] node indices, remaining ones first
        padding = torch.arange(width, device=order.device) >= counts[:, None]
        nodes = h[rows.instance[:, None], order]  # [R, K, d]
        current = h[rows.instance, rows.current]
        token = self.embed_state(torch.cat([current, rows.context], -1))
        x = torch.cat([token[:, None], nodes], 1)
        visible = torch.cat([torch.ones_like(padding[:, :1]), ~padding], 1)
        for layer in self.decoder:
            x = layer(x, visible)
        kept = self.score(self.norm_out(x[:, 1:])).squeeze(-1).masked_fill(padding, float("-inf"))
        scores = torch.full_like(remaining, float("-inf"), dtype=kept.dtype).scatter(1, order, kept)
        return torch.log_softmax(scores.masked_fill(~mask, float("-inf")), -1)

    def step(
        self, h: Tensor, state: VRPState, mask: Tensor, forced: Tensor | None = None
    ) -> Tensor:
        """log pi(. | s_t) [R, N] for every row of `state`; `h` are the embeddings of the B
        distinct instances (`state.instance` maps rows to them), `mask` [R, N] the env's
        `action_mask(state)` (True = legal; illegal actions get -inf).

        Only the depot and the unvisited customers enter the decoder: each row's remaining
        nodes are gathered to the front (in node order) and padded to the longest row's count,
        so a step late in a route costs as little as the remaining instance (LEHD). With the
        candidate restriction on (`candidate_k`, n >= `candidate_min_nodes`) only the depot,
        the k nearest unvisited customers and `forced` [R] (the step's teacher-forced action,
        when given) enter, and every other action gets -inf."""
        return self.scores(h, self.rows(state, mask, forced), mask)

    def decode_from(
        self, h: Tensor, state: VRPState, decode: Decode, actions: Tensor | None = None
    ) -> Rollout:
        """Finish `state` (e.g. a prefix, or POMO starts) with this policy, or along `actions`
        [R, T] (each forced action stays a candidate of its step)."""
        first = len(state.actions)

        def log_probs(s: VRPState) -> Tensor:
            forced = None if actions is None else actions[:, len(s.actions) - first]
            return self.step(h, s, env.action_mask(s), forced)

        return roll_out(log_probs, state, decode, actions)

    def forward(
        self,
        batch: VRPBatch,
        num_starts: int = 1,
        decode: Decode = "sampling",
        actions: Tensor | None = None,
    ) -> Rollout:
        """Roll out `num_starts` starts per instance (the env's POMO layout), as the teacher's
        `forward`: sampled, greedy, or teacher-forced along `actions`."""
        return self.decode_from(self.encode(batch), env.reset(batch, num_starts), decode, actions)
