"""TCF107 negative: draws and clock reads that compiled code never evaluates. Under Dynamo
`torch.compiler.is_compiling()` is the constant True: a ternary on it evaluates only one side, an
`or` stops at it, and the `else` of `if is_compiling() or ...:` runs only eagerly. This is also
what tcfix's LayerDrop fix writes (`1.0 if torch.compiler.is_compiling() else np.random.random()`)."""
import time

import numpy as np
import torch
from torch import nn


class Adapter(nn.Module):
    def __init__(self, dim: int = 8, layerdrop: float = 0.1):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(3)])
        self.layerdrop = layerdrop

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            layerdrop_prob = 1.0 if torch.compiler.is_compiling() else np.random.random()
            if not self.training or (layerdrop_prob > self.layerdrop):
                hidden_states = layer(hidden_states)
        for layer in self.layers:
            keep = np.random.rand() > self.layerdrop if not torch.compiler.is_compiling() else True
            if keep:
                hidden_states = layer(hidden_states)
        return hidden_states


class Timed(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if torch.compiler.is_compiling() or time.time() > 0:
            x = self.fc(x)
        if torch.compiler.is_compiling() or self.training:
            x = x * 2
        else:
            self.last_call = time.perf_counter()
        return x
