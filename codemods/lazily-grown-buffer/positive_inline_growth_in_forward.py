"""TCF201 positive: the table is grown inline in `forward`, with no growth method to call from
`__init__`.

tcfix should report the reassignment in `forward` without a fix (the growth has to be moved into a
method that takes the new length first).
"""
import torch
from torch import nn


class ALiBiBias(nn.Module):
    def __init__(self, num_heads: int, max_len: int = 2048):
        super().__init__()
        ratio = 2.0 ** (-8.0 / num_heads)
        self.register_buffer("slopes", torch.tensor([ratio ** (h + 1) for h in range(num_heads)]), persistent=False)
        self.register_buffer("distances", torch.empty(0, 0), persistent=False)

    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        # scores: (batch, heads, q_len, k_len)
        k_len = scores.size(-1)
        if k_len > self.distances.size(0):
            pos = torch.arange(k_len, device=scores.device)
            self.distances = (pos[None, :] - pos[:, None]).clamp(max=0).float()
        bias = self.slopes[:, None, None] * self.distances[:k_len, :k_len]
        return scores + bias
