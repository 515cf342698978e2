# Rows whose count the model fixes: the module's own table, a tensor whose first dimension a
# `permute` made the three of q, k and v, and rows unpacked into names (the unpacking needs that
# count anyway), and a tensor built from a Python list of per-level sizes (`torch.as_tensor`): its
# rows are the list's entries. None of these changes with the input (torch 2.15, the as_tensor
# rows over four sequence lengths: 2 graphs, no break).
# tcfix: no TCF204 finding.
import torch
from torch import nn


class TinyAttention(nn.Module):
    def __init__(self, dim: int = 8, heads: int = 2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.register_buffer("anchors", torch.zeros(4, dim))
        self.levels = [(4, 4), (2, 2)]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        parts = list(qkv)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        first, second = x.unbind(0)
        out = torch.nn.functional.scaled_dot_product_attention(parts[0], parts[1], parts[2])
        anchors = [a for a in self.anchors]
        shapes = torch.as_tensor(self.levels, dtype=torch.long)
        per_level = [h * w for h, w in shapes]
        return out.sum() + q.sum() + k.sum() + v.sum() + first.sum() + second.sum() + anchors[0].sum() + per_level[0]
