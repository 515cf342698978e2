# Two ways torch keeps Dynamo out of a function without a graph break: a probe under
# `torch._dynamo.assume_constant_result` runs once at trace time and its result is inlined; a
# kernel loader under `torch._dynamo.allow_in_graph` goes into the graph as one opaque call. The
# prints inside them are not traced.
# tcfix: no TCF101 finding.
import torch
from torch import nn


@torch._dynamo.assume_constant_result
def is_new_gpu() -> bool:
    major, _ = torch.cuda.get_device_capability() if torch.cuda.is_available() else (0, 0)
    print("device major:", major)
    return major >= 10


@torch._dynamo.allow_in_graph
def ensure_kernel_loaded(x: torch.Tensor) -> None:
    print("loading kernel for", x.dtype)


class Expert(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.up = nn.Linear(dim, 4 * dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ensure_kernel_loaded(x)
        h = self.up(x)
        return h.relu() if is_new_gpu() else torch.nn.functional.gelu(h)
