"""data-dependent-branch (TCF104): LayerDrop gets no fix (issue #27).

transformers' LayerDrop draws `torch.rand([])` for each layer in training and skips the layer when
the draw falls below `self.layerdrop`, either with `continue` (most encoders) or through a flag
(`to_drop = True`, then `if not to_drop: hidden_states = layer(...)`, as BART writes it). The test
on the draw breaks the graph inside the layer loop, so Dynamo runs the whole forward eagerly.

tcfix once wrote `if not torch.compiler.is_compiling() and dropout_probability < self.layerdrop:`
(LayerDrop off under compile). Measured under torch 2.15 then: training went from 1 eager frame and
2 graphs to 1 graph, but compiled training ran every layer where eager drops some, a different model.
That removes the feature, not the hazard: the finding now has no fix and says what keeps LayerDrop
(compile each layer, or `torch.cond` / `torch.where` on a drawn tensor).
"""
import torch
from torch import nn


class Layer(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.norm(hidden_states + torch.nn.functional.gelu(self.fc(hidden_states)))


class Encoder(nn.Module):
    """BART's encoder loop: a flag, then the layer under `if not to_drop:`."""

    def __init__(self, dim: int = 16, depth: int = 4, layerdrop: float = 1e-6):
        super().__init__()
        self.layers = nn.ModuleList([Layer(dim) for _ in range(depth)])
        self.layerdrop = layerdrop

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        for idx, encoder_layer in enumerate(self.layers):
            # add LayerDrop (see https://huggingface.co/papers/1909.11556 for description)
            to_drop = False
            if self.training and self.layerdrop > 0.0:
                dropout_probability = torch.rand([])
                if dropout_probability < self.layerdrop:  # skip the layer
                    to_drop = True

            if not to_drop:
                hidden_states = encoder_layer(hidden_states)
        return hidden_states


class Decoder(nn.Module):
    """The `continue` form."""

    def __init__(self, dim: int = 16, depth: int = 4, layerdrop: float = 1e-6):
        super().__init__()
        self.layers = nn.ModuleList([Layer(dim) for _ in range(depth)])
        self.layerdrop = layerdrop

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        for decoder_layer in self.layers:
            if self.training and self.layerdrop > 0.0:
                dropout_probability = torch.rand([])
                if dropout_probability < self.layerdrop:
                    continue
            hidden_states = decoder_layer(hidden_states)
        return hidden_states
