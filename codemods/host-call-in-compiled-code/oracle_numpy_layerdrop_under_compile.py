"""Oracle fixture for host-call-in-compiled-code (TCF107): a numpy LayerDrop draw kept out of compile.

wav2vec2's adapter (also WavLM, Data2VecAudio, Wav2Vec2-Conformer) draws `np.random.random()` for
each layer and runs the layer when the draw is above `self.layerdrop`; VITS draws
`np.random.uniform(0, 1)` and skips the layer when it is below. A numpy scalar draw breaks the graph
(GB0033) inside the layer loop, so Dynamo runs the whole forward eagerly. With --unsafe-fixes tcfix
writes `layerdrop_prob = 1.0 if torch.compiler.is_compiling() else np.random.random()`: under
compile the draw is the constant 1.0, above every rate below 1, so every layer runs and the loop
traces into one graph; eager runs draw as before.

Compiled training now runs every layer, where the eager original drops some: outputs can only agree
when the eager run drops none. The training cases use a rate of 1e-6 with numpy seeded (in
oracle_cases, which runs before each side), at which the eager run keeps every layer: outputs and
gradients then show the fixed, compiled model computes what the original does when it keeps all
layers. The inference cases run the same code in eval mode: the draw comes before the test on
`self.training`, so it breaks there too, and the fix changes nothing eager or compiled computes.

Measured under torch 2.15 (CPU, counting backend), both forms alike, in training and in inference:
before, the draw breaks the graph in the layer loop (GB0033, counted as the frame Dynamo gives up
on), the forward runs eagerly: 0 graphs, 1 eager frame; after, 1 graph, 0 breaks, 0 recompiles,
0 eager frames; outputs (and gradients, in training) equal.
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


def oracle_cases():
    np.random.seed(0)
    inputs = [(torch.randn(2, 5, 16),) for _ in range(3)]
    cases = []
    for name, model in (("adapter", Adapter), ("vits", Encoder)):
        cases += [
            {
                "name": f"{name} training",
                "factory": model,
                "inputs": inputs,
                "train": True,
                "unsafe_fixes": True,
                "atol": 1e-5,
                "expect": {"graph_breaks": (0, 0), "recompiles": (0, 0), "graphs": (0, 1), "eager_frames": (1, 0)},
            },
            {
                "name": f"{name} inference",
                "factory": lambda model=model: model().eval(),
                "inputs": inputs,
                "unsafe_fixes": True,
                "expect": {"graph_breaks": (0, 0), "recompiles": (0, 0), "graphs": (0, 1), "eager_frames": (1, 0)},
            },
        ]
    return cases
