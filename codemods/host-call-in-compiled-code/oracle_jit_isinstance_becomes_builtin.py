"""Oracle fixture for host-call-in-compiled-code (TCF107): an upsampling block that adds an
encoder feature when one is given, tested with `torch.jit.isinstance` so that the block also
scripts. Dynamo skips `torch.jit.isinstance` (GB0007): the graph breaks before the test on every
call. The safe fix uses the builtin `isinstance`, the same test for a plain class: one graph, outputs
and gradients equal."""
import torch
from torch import nn


class UpBlock(nn.Module):
    def __init__(self, channels: int = 4):
        super().__init__()
        self.up = nn.ConvTranspose2d(channels, channels, 2, stride=2)
        self.mix = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor, skip=None) -> torch.Tensor:
        h = self.up(x)
        if skip is not None and torch.jit.isinstance(skip, torch.Tensor):
            h = h + skip
        return self.mix(h)


def oracle_cases():
    inputs = [(torch.randn(2, 4, 3, 3), torch.randn(2, 4, 6, 6)) for _ in range(2)]
    return [
        {
            "name": "with an encoder feature, training",
            "factory": UpBlock,
            "inputs": inputs,
            "train": True,
            "expect": {"graph_breaks": (1, 0), "recompiles": (0, 0), "graphs": (2, 1), "eager_frames": (0, 0)},
        },
        {
            "name": "without one, inference",
            "factory": lambda: UpBlock().eval(),
            "inputs": [(torch.randn(2, 4, 3, 3),)],
            "no_grad": True,
            "expect": {"graph_breaks": (0, 0), "recompiles": (0, 0), "graphs": (1, 1), "eager_frames": (0, 0)},
        },
    ]
