# A recurrent cell stepped over the sequence, adding a learned position row per step from one
# parameter table of `max_len` rows. The table caps the length but does not fix it: every new
# sequence length below the cap is a new unrolled graph, so the loop recompiles per length.
# tcfix: TCF204 on the loop over `x.shape[1]`.
import torch
from torch import nn


class StepEncoder(nn.Module):
    def __init__(self, dim: int, max_len: int = 512):
        super().__init__()
        self.pos = nn.Parameter(torch.zeros(max_len, dim))
        self.cell = nn.GRUCell(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.new_zeros(x.shape[0], x.shape[2])
        for t in range(x.shape[1]):
            h = self.cell(x[:, t] + self.pos[t], h)
        return h
