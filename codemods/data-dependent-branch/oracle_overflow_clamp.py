"""Oracle fixture for data-dependent-branch (TCF104).

A pre-norm transformer encoder layer with the fp16 overflow guard that many transformers encoders carry
(`if torch.isinf(h).any(): h = torch.clamp(h, ...)`) and a gated activation chosen by the sign of the
mean activation. Each `if` is a data-dependent branch (GB0170): the graph breaks twice per forward.
With --unsafe-fixes tcfix writes `h = torch.where(cond, torch.clamp(h, ...), h)` and
`act = torch.where(cond, F.gelu(h), -h)`: one graph, and outputs and gradients equal the original's
eager ones (the inputs are finite, so the side not taken has no NaN/inf to leak into the gradients).

Dynamo records a data-dependent branch in counters["unimplemented"], not counters["graph_break"], so
the harness's graph_breaks stays 0 before the fix: the cost shows as graphs, 3 before (the forward
split at each `if`), 1 after.
"""
import torch
import torch.nn.functional as F
from torch import nn


class EncoderLayer(nn.Module):
    def __init__(self, dim: int = 32, heads: int = 4):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, dim * 2)
        self.fc2 = nn.Linear(dim * 2, dim)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        h = self.norm1(hidden_states)
        hidden_states = hidden_states + self.attn(h, h, h, need_weights=False)[0]
        h = self.fc1(self.norm2(hidden_states))
        if h.mean() > 0:
            act = F.gelu(h)
        else:
            act = -h
        hidden_states = hidden_states + self.fc2(act)
        if torch.isinf(hidden_states).any():
            hidden_states = torch.clamp(hidden_states, min=-65000.0, max=65000.0)
        return hidden_states


def oracle_cases():
    batches = [(torch.randn(2, 5, 32),) for _ in range(3)]
    return [
        {
            "name": "inference",
            "factory": lambda: EncoderLayer().eval(),
            "inputs": batches,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (None, 0), "graphs": (3, 1), "eager_frames": (None, 0)},
        },
        {
            "name": "training",
            "factory": EncoderLayer,
            "inputs": batches,
            "train": True,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (None, 0), "graphs": (3, 1), "eager_frames": (None, 0)},
        },
    ]
