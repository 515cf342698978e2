"""The float16 overflow clamp in a file that runs its projection in half precision itself
(`.to(torch.float16)`): its runs are float16 whatever the user asks, so the `.any()` is reached
and breaks the graph on the default path (measured under torch 2.15 with a float32 input: Dynamo
stops at the branch, `generic_jump`). The finding keeps its severity: no "only when float16"."""
import torch
from torch import nn


class HalfProjection(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.proj(x).to(torch.float16)
        if h.dtype == torch.float16 and torch.isinf(h).any():
            h = h.clamp(-1000, 1000)
        return h


model = torch.compile(HalfProjection())
