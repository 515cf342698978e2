"""Rebuilt on every call without reading the old value (no guard on it, measured: no recompile),
and an activation stored for later inspection (written, never read back in compiled code)."""
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, dim * 3)
        self.attn_map = None
        self.save_attn = False

    def forward(self, x):
        B, N, C = x.shape
        self.mask = torch.ones(N, N).tril()
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        attn = (q @ k.transpose(-2, -1)).masked_fill(self.mask == 0, float("-inf")).softmax(-1)
        if self.save_attn:
            self.attn_map = attn.detach()
        return attn @ v
