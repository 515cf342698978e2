"""TCF201 positive: a rotary embedding whose cos/sin caches start empty and are extended with
`torch.cat` when a longer sequence arrives (two buffers grown in the same method).

tcfix should report both reassignments and offer one Safe fix: a single
`self._extend_cache(max_position_embeddings)` line at the end of `__init__` (not two copies).
"""
import torch
from torch import nn


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class RotaryEmbedding(nn.Module):
    def __init__(self, dim: int, max_position_embeddings: int = 4096, base: float = 10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.register_buffer("cos_cached", torch.empty((0, dim)), persistent=False)
        self.register_buffer("sin_cached", torch.empty((0, dim)), persistent=False)

    def _extend_cache(self, seq_len: int) -> None:
        cached = self.cos_cached.size(0)
        if seq_len <= cached:
            return
        t = torch.arange(cached, seq_len, device=self.inv_freq.device, dtype=torch.float32)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.cos_cached = torch.cat((self.cos_cached, emb.cos()), dim=0)
        self.sin_cached = torch.cat((self.sin_cached, emb.sin()), dim=0)

    def forward(self, q: torch.Tensor, k: torch.Tensor):
        # q, k: (batch, heads, seq_len, head_dim)
        seq_len = q.shape[-2]
        self._extend_cache(seq_len)
        cos = self.cos_cached[:seq_len].to(q.dtype)
        sin = self.sin_cached[:seq_len].to(q.dtype)
        return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
