"""LayerDrop (trimmed from transformers' BART-style encoders): `torch.rand([]) < p` in the layer loop.
In training the graph breaks inside the loop, so Dynamo runs the whole forward eagerly. The unsafe fix
turns LayerDrop off under compile: `if not torch.compiler.is_compiling() and dropout_probability < ...`."""
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, dim: int = 16, depth: int = 4, layerdrop: float = 0.1):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])
        self.layerdrop = layerdrop

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            if self.training:
                dropout_probability = torch.rand([])
                if dropout_probability < self.layerdrop:
                    continue
            hidden_states = layer(hidden_states)
        return hidden_states
