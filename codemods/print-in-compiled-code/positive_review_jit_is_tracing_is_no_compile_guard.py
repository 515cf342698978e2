# A block that returns early when TorchScript traces it, asking through the bare name imported from
# `torch.jit`. `torch.jit.is_tracing()` is false under Dynamo, so under torch.compile the code
# after the early return is traced, print included. Only a project's or transformers' own
# `is_tracing` is true under Dynamo.
# tcfix: TCF101 on the print after the early return.
import torch
from torch import nn
from torch.jit import is_tracing


class Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if is_tracing():
            return self.proj(x)
        print("block input", x.shape)
        return self.proj(x)
