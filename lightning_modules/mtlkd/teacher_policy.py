"""POMO-style teacher policy: heavy attention encoder, light pointer decoder, batched rollouts.

MTL-KD trains one such heavy-encoder / light-decoder model per seen variant and distils them
into a heavy-decoder student. Features follow `features.py`; the encoder is
`attention_encoder.AttentionEncoder`, the decoder `pointer_decoder.PointerDecoder`. Legality of
every action comes from `optiforge.problems.vrp.env.action_mask`; the policy never decides
feasibility.

Rollout layout (the env's): B instances, S starts, R = S * B rows, row r = s * B + b. With
S > 1 the env's reset has already sent start s to customer s + 1 (POMO's forced first node,
not part of the log-likelihood); with S = 1 decoding starts at the depot.

Public interface (shared with the student): `precompute(batch)` encodes once into a cache,
`step(cache, state, mask)` gives log pi [R, N] of one decoding step.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from optiforge.lightning_modules.mtlkd.attention_encoder import AttentionEncoder, Norm
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
from optiforge.lightning_modules.mtlkd.pointer_decoder import DecoderCache, PointerDecoder
from optiforge.lightning_modules.mtlkd.rollout import Decode, Rollout, roll_out
from optiforge.problems.vrp import env
from optiforge.problems.vrp.env import VRPState
from optiforge.problems.vrp.instance import VRPBatch


@dataclass(frozen=True)
class TeacherCache:
    """What `POMOPolicy.precompute` computes once per batch: node embeddings [B, N, d] and the
    pointer decoder's keys and values of them."""

    embeddings: Tensor
    decoder: DecoderCache


class POMOPolicy(nn.Module):
    """pi(a_t | s_t, G) for every VRP variant; decodes all rows of a batch at once.

    Args:
        embed_dim: embedding size d.
        num_layers: encoder layers (POMO: 6).
        num_heads: attention heads in the encoder and in the decoder's glimpse.
        ff_dim: encoder feed-forward hidden size.
        norm: encoder normalisation, "instance" (POMO) or "rms" (RMSNorm).
        logit_clip: C in u = C tanh(.) of the pointer logits.
        feature_scaling: how times and lengths enter the features (`features.FeatureScaling`):
            "raw" instance units (the shipped weights) or "instance" (divided by the
            instance's own horizon and distance limit).
    """

    def __init__(
        self,
        embed_dim: int = 128,
        num_layers: int = 6,
        num_heads: int = 8,
        ff_dim: int = 512,
        norm: Norm = "instance",
        logit_clip: float = 10.0,
        feature_scaling: FeatureScaling = "raw",
    ) -> None:
        super().__init__()
        check_scaling(feature_scaling)
        self.feature_scaling = feature_scaling
        self.encoder = AttentionEncoder(
            DEPOT_FEATURES, CUSTOMER_FEATURES, embed_dim, num_layers, num_heads, ff_dim, norm
        )
        self.decoder = PointerDecoder(embed_dim, CONTEXT_FEATURES, num_heads, logit_clip)

    def encode(self, batch: VRPBatch) -> Tensor:
        """Node embeddings [B, N, d]."""
        scaling = self.feature_scaling
        return self.encoder(depot_features(batch, scaling), customer_features(batch, scaling))

    def precompute(self, batch: VRPBatch) -> TeacherCache:
        """Encode `batch` once: embeddings and the decoder's projections, for every `step`."""
        h = self.encode(batch)
        return TeacherCache(h, self.decoder.precompute(h))

    def step(self, cache: TeacherCache, state: VRPState, mask: Tensor) -> Tensor:
        """log pi(. | s_t) [R, N] for every row of `state`; `mask` [R, N] is the env's
        `action_mask(state)` (True = legal; illegal actions get -inf)."""
        h = cache.embeddings
        b, _, d = h.shape
        s = state.num_rows // b
        current = state.current.view(s, b).T  # [B, S]
        h_current = h.gather(1, current[..., None].expand(-1, -1, d))
        context = context_features(state, self.feature_scaling).view(s, b, -1).transpose(0, 1)
        mask = mask.view(s, b, -1).transpose(0, 1)
        log_p = self.decoder(cache.decoder, torch.cat([h_current, context], -1), mask)
        return log_p.transpose(0, 1).reshape(state.num_rows, -1)

    def forward(
        self,
        batch: VRPBatch,
        num_starts: int = 1,
        decode: Decode = "sampling",
        actions: Tensor | None = None,
    ) -> Rollout:
        """Roll out `num_starts` starts per instance of `batch` (which must pass `check()`).

        `decode` picks each action by sampling from pi or greedily (argmax); given `actions`
        [R, T] (e.g. a previous `Rollout.actions`), the policy is teacher-forced along them
        instead and returns their log-likelihood; an illegal forced action raises.
        """
        cache = self.precompute(batch)
        state = env.reset(batch, num_starts)
        return roll_out(lambda s: self.step(cache, s, env.action_mask(s)), state, decode, actions)
