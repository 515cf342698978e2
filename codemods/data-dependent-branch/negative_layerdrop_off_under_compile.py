"""TCF104 negative: LayerDrop already turned off under compile, as tcfix's fix writes it. Under
Dynamo `torch.compiler.is_compiling()` is the constant True: `not ... and` stops before the draw is
compared, and so does `... or`; Dynamo never sees the tensor test."""
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, dim: int = 8, layerdrop: float = 0.1):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(3)])
        self.layerdrop = layerdrop

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            if self.training and self.layerdrop > 0.0:
                dropout_probability = torch.rand([])
                if not torch.compiler.is_compiling() and dropout_probability < self.layerdrop:
                    continue
            hidden_states = layer(hidden_states)
        for layer in self.layers:
            if torch.compiler.is_compiling() or torch.rand([]) > self.layerdrop:
                hidden_states = layer(hidden_states)
        return hidden_states
