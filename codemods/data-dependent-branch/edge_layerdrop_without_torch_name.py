"""LayerDrop in a file that binds no name to torch (`from torch import nn, rand`): the fix would
need an `import torch` tcfix does not add here, so there is no fix, and the LayerDrop advice says
what to write by hand."""
from torch import nn, rand


class Encoder(nn.Module):
    def __init__(self, dim: int = 8, layerdrop: float = 0.1):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(3)])
        self.layerdrop = layerdrop

    def forward(self, hidden_states):
        for layer in self.layers:
            if self.training and rand([]) < self.layerdrop:
                continue
            if self.training:
                if rand([]) < self.layerdrop:
                    continue
            hidden_states = layer(hidden_states)
        return hidden_states
