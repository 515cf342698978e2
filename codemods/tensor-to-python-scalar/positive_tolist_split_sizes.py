"""Variable-length images packed in one sequence, split back with sizes read by `.tolist()`
(the pattern of transformers' vision attention blocks)."""
import torch
from torch import nn


class PackedVisionAttention(nn.Module):
    def __init__(self, dim: int = 32):
        super().__init__()
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, hidden_states: torch.Tensor, cu_seqlens: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(hidden_states).chunk(3, dim=-1)
        lengths = cu_seqlens[1:] - cu_seqlens[:-1]
        splits = [torch.split(t, lengths.tolist(), dim=0) for t in (q, k, v)]
        outputs = [
            torch.softmax(qi @ ki.transpose(0, 1), dim=-1) @ vi for qi, ki, vi in zip(*splits)
        ]
        return self.proj(torch.cat(outputs, dim=0))
