"""TCF201 positive: the maximum length is an attribute set in `__init__` (`self.block_size`), not a
parameter (nanoGPT-style config object).

The causal mask is registered empty and grown in `_grow_mask` when a longer sequence arrives. tcfix
should report it and offer a Safe fix calling `self._grow_mask(self.block_size)` at the end of
`__init__`.
"""
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class GPTConfig:
    block_size: int = 1024
    n_embd: int = 768
    n_head: int = 12


class CausalSelfAttention(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.block_size = config.block_size
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.register_buffer("mask", torch.empty(0, 0, dtype=torch.bool), persistent=False)

    def _grow_mask(self, size: int) -> None:
        if self.mask.size(0) >= size:
            return
        self.mask = torch.ones(size, size, dtype=torch.bool, device=self.mask.device).tril()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.size()
        self._grow_mask(T)
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask[:T, :T])
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))
