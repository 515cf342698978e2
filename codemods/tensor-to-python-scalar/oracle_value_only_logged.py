"""Oracle fixture for tensor-to-python-scalar (TCF103): a value read from a tensor only to be
logged (the shape of I-BERT's `logger.info(f"Dynamic shift adjustment: {int(shift_old)} -> ...")`).
`int(...)` and `.item()` inside the message break the graph as the logger call does (TCF101). The
fix for both is the one guard on the call: under compile the message is not written, so the
values are not read, and the forward is one graph; eager runs still log them."""
import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


class ScaledNorm(nn.Module):
    def __init__(self, dim: int = 16):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.register_buffer("shift", torch.zeros(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shift = torch.log2(x.abs().amax() + 1).ceil()
        logger.debug(f"shift {int(self.shift)} -> {int(shift)}, peak {x.abs().max().item()}")
        return self.norm(x) * (2.0 ** -shift)


def oracle_cases():
    batches = [(torch.randn(2, 8, 16),) for _ in range(3)]
    return [
        {
            "name": "inference",
            "factory": lambda: ScaledNorm().eval(),
            "inputs": batches,
            "atol": 1e-5,
            "expect": {"graph_breaks": (">=1", 0), "graphs": (None, 1), "eager_frames": (None, 0)},
        },
        {
            "name": "training",
            "factory": ScaledNorm,
            "inputs": batches,
            "train": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (">=1", 0), "graphs": (None, 1), "eager_frames": (None, 0)},
        },
    ]
