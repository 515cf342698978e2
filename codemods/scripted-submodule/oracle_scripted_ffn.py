"""Oracle fixture for scripted-submodule (TCF109).

A pre-norm block whose feed-forward was wrapped in `torch.jit.script` for speed in eager mode.
Under torch.compile Dynamo cannot trace the ScriptModule, and the block's forward compiles no graph
(it runs eagerly). With the wrapper dropped (unsafe fix), forward is one graph, and the outputs and
gradients are those of the original.
"""
import torch
from torch import nn


class FeedForward(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim: int = 32):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ffn = torch.jit.script(FeedForward(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.ffn(self.norm(x))


def oracle_cases():
    batches = [(torch.randn(4, 8, 32),) for _ in range(3)]
    return [
        {
            "name": "inference",
            "factory": lambda: Block().eval(),
            "inputs": batches,
            "unsafe_fixes": True,
            "expect": {"graphs": (0, 1), "eager_frames": (">=1", 0), "graph_breaks": (None, 0)},
        },
        {
            "name": "training",
            "factory": Block,
            "inputs": batches,
            "train": True,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"graphs": (0, 1), "graph_breaks": (None, 0)},
        },
    ]
