"""Three look-alikes that do not change between calls under compile. A learned positional
embedding slices with `past_key_values_length` only when `position_ids` is missing, and the
decoder that calls it always passes the positions it computed (transformers' BART/OPT/Whisper
layout). A forecaster's `past_values` is the history window, not a cache of keys and values: its
length is fixed by the model's context. A single-token shortcut guarded by `not is_compiling()`
never runs under compile."""
import torch
from torch import nn


class LearnedPositions(nn.Embedding):
    def forward(self, input_ids: torch.Tensor, past_key_values_length: int = 0, position_ids=None):
        if position_ids is None:
            seq_len = input_ids.shape[1]
            position_ids = torch.arange(past_key_values_length, past_key_values_length + seq_len)
        return super().forward(position_ids)


class Forecaster(nn.Module):
    def __init__(self, patch: int, dim: int):
        super().__init__()
        self.patch = patch
        self.proj = nn.Linear(patch, dim)

    def forward(self, past_values: torch.Tensor):
        length = past_values.shape[-1]
        patches = past_values[..., : length - length % self.patch].unflatten(-1, (-1, self.patch))
        return self.proj(patches)


class PackedAttention(nn.Module):
    def forward(self, query, key, value):
        q_length = query.shape[2]
        if q_length == 1 and not torch.compiler.is_compiling():
            query = query.flatten(1, 2).unsqueeze(2)
        return torch.nn.functional.scaled_dot_product_attention(query, key, value)
