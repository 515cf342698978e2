"""TCF107 positive: stochastic depth drawn with numpy. `np.random.rand()` without a shape returns a
Python float, which Dynamo cannot keep in the graph (GB0033); `np.random.permutation` is not
implemented by torch's numpy layer (GB0294)."""
import numpy as np
import torch
from torch import nn


class DropPathBlock(nn.Module):
    def __init__(self, dim: int, drop_prob: float = 0.1):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.drop_prob = drop_prob

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training and np.random.rand() < self.drop_prob:
            return x
        order = torch.from_numpy(np.random.permutation(x.shape[0]))
        return x[order] + self.fc(x)
