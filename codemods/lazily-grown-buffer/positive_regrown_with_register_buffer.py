"""TCF201 positive: the growth routine re-registers the buffer (`self.register_buffer("cos_cached",
...)`) instead of assigning `self.cos_cached = ...` — the layout of older Hugging Face rotary
embeddings, here without the pre-grow in `__init__`.

tcfix should report the re-registration in `_set_cos_cache` and offer the Safe fix
`self._set_cos_cache(max_position_embeddings)` at the end of `__init__`.
"""
import torch
from torch import nn


class RotaryEmbedding(nn.Module):
    def __init__(self, dim: int, max_position_embeddings: int = 2048, base: float = 10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.register_buffer("cos_cached", torch.empty(0, dim), persistent=False)

    def _set_cos_cache(self, seq_len: int) -> None:
        t = torch.arange(seq_len, device=self.inv_freq.device, dtype=self.inv_freq.dtype)
        freqs = torch.outer(t, self.inv_freq)
        self.register_buffer("cos_cached", torch.cat((freqs, freqs), dim=-1).cos(), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        seq_len = x.shape[-2]
        if seq_len > self.cos_cached.shape[0]:
            self._set_cos_cache(seq_len)
        return self.cos_cached[:seq_len].to(x.dtype)
