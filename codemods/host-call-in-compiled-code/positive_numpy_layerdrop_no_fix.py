"""host-call-in-compiled-code (TCF107): a numpy LayerDrop draw gets no fix (issue #27).

wav2vec2's adapter (also WavLM, Data2VecAudio, Wav2Vec2-Conformer) draws `np.random.random()` for
each layer and runs the layer when the draw is above `self.layerdrop`; VITS draws
`np.random.uniform(0, 1)` and skips the layer when it is below. A numpy scalar draw breaks the graph
(GB0033) inside the layer loop, so Dynamo runs the whole forward eagerly.

tcfix once wrote `1.0 if torch.compiler.is_compiling() else np.random.random()`, which turned
LayerDrop off in compiled training (measured under torch 2.15: 1 eager frame to 1 graph, every layer
run). That trains a different model than eager: the finding now has no fix and says what keeps
LayerDrop instead.
"""
import numpy as np
import torch
from torch import nn


class Adapter(nn.Module):
    """wav2vec2's adapter: the layer runs when the draw is above the rate."""

    def __init__(self, dim: int = 16, depth: int = 3, layerdrop: float = 1e-6):
        super().__init__()
        self.layers = nn.ModuleList([nn.Conv1d(dim, dim, 3, padding=1) for _ in range(depth)])
        self.layerdrop = layerdrop

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        hidden_states = hidden_states.transpose(1, 2)
        for layer in self.layers:
            layerdrop_prob = np.random.random()
            if not self.training or (layerdrop_prob > self.layerdrop):
                hidden_states = torch.nn.functional.gelu(layer(hidden_states))
        return hidden_states.transpose(1, 2)


class Encoder(nn.Module):
    """VITS' encoder: the layer is skipped when the draw is below the rate."""

    def __init__(self, dim: int = 16, depth: int = 3, layerdrop: float = 1e-6):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])
        self.layerdrop = layerdrop

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        for encoder_layer in self.layers:
            # add LayerDrop (see https://huggingface.co/papers/1909.11556 for description)
            dropout_probability = np.random.uniform(0, 1)

            skip_the_layer = self.training and (dropout_probability < self.layerdrop)
            if not skip_the_layer:
                hidden_states = torch.tanh(encoder_layer(hidden_states))
        return hidden_states
