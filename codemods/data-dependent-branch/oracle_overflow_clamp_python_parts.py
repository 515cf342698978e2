"""Oracle fixture for data-dependent-branch (TCF104): the fp16 overflow clamps of transformers'
encoder-decoder layers, as they are written there.

- `Fp16Block` (BART, Marian, LongT5, Pix2Struct): `if hidden_states.dtype == torch.float16 and
  not torch.isfinite(hidden_states).all():` then `clamp_value = torch.finfo(hidden_states.dtype).max
  - 1000` and the clamp, twice in one forward with the same temporary name. tcfix keeps the Python
  part as `if hidden_states.dtype == torch.float16:`, keeps `clamp_value = ...` (a Python number
  from the dtype, a temporary of each branch) and picks the clamp with `torch.where`. Run in fp16
  so that the tensor part is reached: two breaks, and the third input overflows fp16 after `fc1`
  (10 of 160 values are inf), so the clamp side runs too: 4 graphs before, 1 after, outputs equal,
  and in training gradients equal too.
- `DetrBlock` (DETR, RT-DETR, Mask2Former...): the same clamp without the dtype test, under
  `if self.training:`; the `if` goes and `clamp_value = ...` moves before the `torch.where`.
  fp32, training: 2 graphs before, 1 after, outputs and gradients equal.

Each forward ends with some work after its last `if` (`* 0.5`): without it the code after the break
compiles to no graph, and the graph count would not show the break.
"""
import torch
from torch import nn


class Fp16Block(nn.Module):
    def __init__(self, dim: int = 16):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        hidden_states = self.fc1(hidden_states) * 300.0
        if hidden_states.dtype == torch.float16 and not torch.isfinite(hidden_states).all():
            clamp_value = torch.finfo(hidden_states.dtype).max - 1000
            hidden_states = torch.clamp(hidden_states, min=-clamp_value, max=clamp_value)
        hidden_states = self.fc2(hidden_states / 300.0)
        if hidden_states.dtype == torch.float16 and torch.isinf(hidden_states).any():
            clamp_value = torch.finfo(hidden_states.dtype).max - 1000
            hidden_states = torch.clamp(hidden_states, min=-clamp_value, max=clamp_value)
        return hidden_states * 0.5


class DetrBlock(nn.Module):
    def __init__(self, dim: int = 16):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim * 2)
        self.fc2 = nn.Linear(dim * 2, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        residual = hidden_states
        hidden_states = self.fc2(torch.relu(self.fc1(hidden_states)))
        hidden_states = self.norm(residual + hidden_states)
        if self.training:
            if not torch.isfinite(hidden_states).all():
                clamp_value = torch.finfo(hidden_states.dtype).max - 1000
                hidden_states = torch.clamp(hidden_states, min=-clamp_value, max=clamp_value)
        return hidden_states * 0.5


def oracle_cases():
    fp16 = [(torch.randn(2, 5, 16).half(),) for _ in range(2)] + [(torch.full((2, 5, 16), 200.0).half(),)]
    fp32 = [(torch.randn(2, 5, 16),) for _ in range(3)]
    return [
        {
            "name": "fp16-inference",
            "factory": lambda: Fp16Block().half().eval(),
            "inputs": fp16,
            "unsafe_fixes": True,
            "atol": 1e-2,
            "rtol": 1e-3,
            "expect": {"graph_breaks": (None, 0), "graphs": (4, 1), "eager_frames": (None, 0)},
        },
        {
            "name": "fp16-training",
            "factory": lambda: Fp16Block().half(),
            "inputs": fp16,
            "train": True,
            "unsafe_fixes": True,
            "atol": 1e-2,
            "rtol": 1e-3,
            "expect": {"graph_breaks": (None, 0), "graphs": (4, 1), "eager_frames": (None, 0)},
        },
        {
            "name": "detr-training",
            "factory": DetrBlock,
            "inputs": fp32,
            "train": True,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (None, 0), "graphs": (2, 1), "eager_frames": (None, 0)},
        },
    ]
