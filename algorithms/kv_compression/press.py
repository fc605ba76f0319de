"""`BalanceKVPress`: BalanceKV as a kvpress press (PyPI `kvpress`, extra `kv`); `CompressorPress`
runs any of our compressors the same way.

A kvpress press compresses each layer's cache after the prefill's attention; this one keeps
BalanceKV's tokens and leaves their log-weights on the attention module. Decoding then needs
those weights as an attention bias, which kvpress's presses never carry: the press wraps
`transformers`' registered attention functions (as kvpress itself does for head-wise masks) so
that later queries see the log-weights added to their logits. Use it like any press:

    press = BalanceKVPress(compression_ratio=0.75)  # keeps 1/4
    with press(model):
        model(input_ids, past_key_values=cache)  # or kvpress's pipeline(..., press=press)

`BalanceKVPress(..., variant="authors")` is the authors' practical prefill press instead (their
padding and cut rule, 16 sinks and 64 recent tokens by default).

The model's attention implementation must be a registered one ("sdpa", the default): "eager"
is a per-model function the wrapper cannot reach.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
from kvpress.presses.base_press import BasePress
from torch import Tensor, nn
from transformers import PreTrainedModel
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

from optiforge.algorithms.kv_compression.balancekv import BalanceKV
from optiforge.algorithms.kv_compression.base import KVCompressor, halvings_for_rate

LOG_WEIGHTS = "balancekv_log_weights"
# Exact sinks and recent window of each BalanceKVPress variant when not given.
VARIANT_WINDOWS = {"ours": (0, 0), "authors": (16, 64)}


def with_log_weight_bias(attention: Callable) -> Callable:
    """`attention` with the module's stored log-weights [B, H_kv, m] added to the logits of the
    first m cached keys. A prefill (as many queries as keys) clears them: a new sequence."""

    def biased(
        module: nn.Module,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        attention_mask: Tensor | None,
        *args: object,
        **kwargs: object,
    ) -> tuple[Tensor, Tensor | None]:
        queries, keys = query.shape[-2], key.shape[-2]
        if queries == keys:
            setattr(module, LOG_WEIGHTS, None)
        log_weights = getattr(module, LOG_WEIGHTS, None)
        if log_weights is not None:
            heads = query.shape[1] // log_weights.shape[1]
            bias = query.new_zeros(query.shape[0], query.shape[1], 1, keys)
            bias[..., 0, : log_weights.shape[-1]] = log_weights.repeat_interleave(heads, dim=1)
            if attention_mask is None:
                rows = torch.arange(queries, device=query.device).unsqueeze(-1)
                cols = torch.arange(keys, device=query.device)
                attention_mask = cols <= rows + (keys - queries)
            if attention_mask.dtype == torch.bool:
                attention_mask = torch.zeros_like(attention_mask, dtype=query.dtype).masked_fill(
                    ~attention_mask, float("-inf")
                )
            attention_mask = attention_mask[..., :keys] + bias
        return attention(module, query, key, value, attention_mask, *args, **kwargs)

    biased.balancekv_wrapped = True  # type: ignore[attr-defined]
    return biased


def install_log_weight_bias() -> None:
    """Wrap every registered attention function once (idempotent)."""
    for name, function in list(ALL_ATTENTION_FUNCTIONS.items()):
        if not getattr(function, "balancekv_wrapped", False):
            ALL_ATTENTION_FUNCTIONS[name] = with_log_weight_bias(function)


@dataclass
class CompressorPress(BasePress):
    """Any `KVCompressor` as a kvpress press (the baselines of the benchmark run through it).

    Attributes:
        compressor: the compressor (its rate, sinks and window set the budget).
        seed: seed of the compressor's generator (on the cache's device), reset at each prefill.
    """

    compressor: KVCompressor | None = None
    seed: int = field(default=0, kw_only=True)

    def __post_init__(self) -> None:
        if self.compressor is None or self.compressor.needs_queries:
            raise ValueError(
                "compressor must be a KVCompressor without observation queries, got "
                f"{type(self.compressor).__name__}"
            )
        self.generators: dict[torch.device, torch.Generator] = {}

    def compress(
        self,
        module: nn.Module,
        hidden_states: Tensor,
        keys: Tensor,
        values: Tensor,
        attentions: Tensor | None,
        kwargs: dict,
    ) -> tuple[Tensor, Tensor]:
        """Keys and values of the kept tokens; their log-weights stay on `module`."""
        assert self.compressor is not None  # checked in __post_init__
        if self.compressor.halvings == 0:
            return keys, values
        if keys.device not in self.generators:
            self.generators[keys.device] = torch.Generator(device=keys.device)
        generator = self.generators[keys.device]
        if module.layer_idx == 0:
            generator.manual_seed(self.seed)
        kept = self.compressor.compress(keys, values, generator=generator)
        setattr(module, LOG_WEIGHTS, kept.log_weights.to(keys.dtype))
        return kept.keys.contiguous(), kept.values.contiguous()

    @contextmanager
    def __call__(self, model: PreTrainedModel) -> Generator:
        """kvpress's context manager, with the log-weight bias installed for decoding."""
        implementation = model.config._attn_implementation
        if implementation not in ALL_ATTENTION_FUNCTIONS:
            raise ValueError(
                f"model attn_implementation must be one of {sorted(ALL_ATTENTION_FUNCTIONS)} "
                f"for the log-weight attention bias, got {implementation!r}"
            )
        install_log_weight_bias()
        with super().__call__(model):
            yield


@dataclass
class BalanceKVPress(CompressorPress):
    """BalanceKV in kvpress; kept tokens = sinks + window + floor(rest * (1 - compression_ratio)).

    `variant="authors"` is the authors' practical prefill press as their code runs it
    (`BalanceKV` module docstring): keys centred per zero-padded block, kernel
    exp(<k_i, k_j> / sqrt(d)) (<v_i, v_j> + 0.025), walk probabilities 1/2 - 4 sum K s, the cut
    where the later side reaches half, log-weight decoding bias. Its defaults are the authors'
    press's: 16 sinks, 64 recent tokens, block 128, gamma 4, temperature 1, beta 0, 2 halvings
    at compression_ratio 0.75 (their `itrs`; their NIAH and LongBench scripts use 32 and 32).

    Attributes:
        compression_ratio: share removed, kvpress's convention; 1 - compression_ratio must be a
            power of 1/2 (0 changes nothing).
        block_size, gamma, temperature, beta, value_offset: as `BalanceKV` (authors' defaults).
        sink_tokens, recent_tokens: kept exactly; None takes the variant's default ("ours": 0
            and 0, so that the budget equals the other presses' at the same ratio; "authors":
            16 and 64).
        variant: "ours" (the default) or "authors".
        seed: seed of the walk's generator, reset at every prefill.
    """

    compressor: KVCompressor | None = field(default=None, init=False, repr=False)
    compression_ratio: float = 0.0
    block_size: int = 128
    gamma: float = 4.0
    temperature: float = 1.0
    beta: float = 0.0
    value_offset: float = 0.025
    sink_tokens: int | None = None
    recent_tokens: int | None = None
    variant: str = "ours"

    def __post_init__(self) -> None:
        try:
            halvings_for_rate(1.0 - self.compression_ratio)
        except ValueError:
            raise ValueError(
                "compression_ratio must be 1 - 1/2^k (0, 0.5, 0.75, 0.875, ...), got "
                f"{self.compression_ratio}"
            ) from None
        if self.variant not in VARIANT_WINDOWS:
            raise ValueError(
                f"variant must be one of {tuple(VARIANT_WINDOWS)}, got {self.variant!r}"
            )
        sinks, window = VARIANT_WINDOWS[self.variant]
        self.sink_tokens = sinks if self.sink_tokens is None else self.sink_tokens
        self.recent_tokens = window if self.recent_tokens is None else self.recent_tokens
        self.compressor = BalanceKV(
            1.0 - self.compression_ratio,
            self.sink_tokens,
            self.recent_tokens,
            self.block_size,
            self.gamma,
            self.temperature,
            self.beta,
            self.value_offset,
            self.variant,
        )
        super().__post_init__()
