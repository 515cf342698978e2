"""TCF107: numpy LayerDrop draws. A scalar draw stored in a name that only LayerDrop comparisons read
(`layerdrop_prob > self.layerdrop`, `self.layer_drop > p`) gets the unsafe fix
`1.0 if torch.compiler.is_compiling() else <draw>`. No fix where the draw is read for anything else,
compared with a rate not named for LayerDrop, stored twice, or drawn inside the test itself."""
import numpy as np
import torch
from torch import nn


class Adapter(nn.Module):
    def __init__(self, dim: int = 8, layerdrop: float = 0.1, layer_drop: float = 0.1):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(3)])
        self.layerdrop = layerdrop
        self.layer_drop = layer_drop

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            layerdrop_prob = np.random.random()
            if not self.training or (layerdrop_prob > self.layerdrop):
                hidden_states = layer(hidden_states)
        for layer in self.layers:
            p = np.random.rand()
            if self.training and self.layer_drop > p:
                continue
            hidden_states = layer(hidden_states)
        return hidden_states


class NotOnlyLayerDrop(nn.Module):
    def __init__(self, dim: int = 8, layerdrop: float = 0.1, drop_prob: float = 0.1):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(3)])
        self.layerdrop = layerdrop
        self.drop_prob = drop_prob

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            scaled = np.random.random()
            if scaled > self.layerdrop:
                hidden_states = layer(hidden_states) * scaled
            other = np.random.random()
            if other > self.drop_prob:
                hidden_states = layer(hidden_states)
            twice = np.random.random()
            twice = np.random.random()
            if twice > self.layerdrop:
                hidden_states = layer(hidden_states)
            if np.random.random() > self.layerdrop:
                hidden_states = layer(hidden_states)
        return hidden_states
