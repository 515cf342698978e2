"""TCF201 positive: the growth routine needs two required arguments (length and device), as in
older Hugging Face rotary embeddings' `_set_cos_sin_cache(seq_len, device, dtype)`.

tcfix should call `self._set_cos_cache(max_position_embeddings, self.cos_cached.device)` at the end
of `__init__` (the empty buffer's own device), Unsafe: the routine builds the table in `inv_freq`'s
dtype, not the buffer's, so built before a cast it is cast afterwards instead of built in that dtype.
"""
import torch
from torch import nn


class RotaryEmbedding(nn.Module):
    def __init__(self, dim: int, max_position_embeddings: int = 2048, base: int = 10000):
        super().__init__()
        self.dim = dim
        self.base = base
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.register_buffer("cos_cached", torch.zeros(0, dim), persistent=False)

    def _set_cos_cache(self, seq_len: int, device: torch.device) -> None:
        t = torch.arange(seq_len, device=device, dtype=self.inv_freq.dtype)
        freqs = torch.outer(t, self.inv_freq)
        self.cos_cached = torch.cat((freqs, freqs), dim=-1).cos()

    def forward(self, x: torch.Tensor, seq_len: int) -> torch.Tensor:
        if seq_len > self.cos_cached.size(0):
            self._set_cos_cache(seq_len, x.device)
        return self.cos_cached[:seq_len].to(dtype=x.dtype)
