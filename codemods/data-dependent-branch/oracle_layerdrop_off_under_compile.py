"""Oracle fixture for data-dependent-branch (TCF104): LayerDrop turned off under compile.

transformers' LayerDrop draws `torch.rand([])` for each layer in training and skips the layer when
the draw falls below `self.layerdrop`, either with `continue` (most encoders) or through a flag
(`to_drop = True`, then `if not to_drop: hidden_states = layer(...)`, as BART writes it). The test
on the draw breaks the graph inside the layer loop, so Dynamo runs the whole forward eagerly. With
--unsafe-fixes tcfix writes `if not torch.compiler.is_compiling() and dropout_probability <
self.layerdrop:`: under compile the test is False before the draw is read, no layer is dropped and
the loop traces into one graph; eager runs still drop layers.

Compiled training now runs every layer, where the eager original drops some: outputs can only agree
when the eager run drops none. The training cases use a rate of 1e-6 (still above 0, so the test is
traced before the fix and breaks), at which the seeded eager run keeps every layer: the outputs and
gradients then show the fixed, compiled model computes what the original does when it keeps all
layers. The inference cases show eval mode is untouched (the test sits under `self.training`).

Measured under torch 2.15 (CPU, counting backend), both forms alike. Training: the forward frame
runs eagerly (1 eager frame, GB0170 in the loop: Dynamo counts it there, not as a graph break) and
each layer compiles on its own, 2 graphs (the second after a recompile on the layer input's
requires_grad); after the fix 1 graph, 0 breaks, 0 recompiles, 0 eager frames, outputs and
gradients equal. Inference: 1 graph before and after, outputs equal.
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


def oracle_cases():
    inputs = [(torch.randn(2, 5, 16),) for _ in range(3)]
    cases = []
    for name, model in (("to_drop", Encoder), ("continue", Decoder)):
        cases += [
            {
                "name": f"{name} training",
                "factory": model,
                "inputs": inputs,
                "train": True,
                "unsafe_fixes": True,
                "atol": 1e-5,
                "expect": {"graph_breaks": (0, 0), "recompiles": (1, 0), "graphs": (2, 1), "eager_frames": (1, 0)},
            },
            {
                "name": f"{name} inference",
                "factory": lambda model=model: model().eval(),
                "inputs": inputs,
                "unsafe_fixes": True,
                "expect": {"graph_breaks": (0, 0), "recompiles": (0, 0), "graphs": (1, 1), "eager_frames": (0, 0)},
            },
        ]
    return cases
