# A kernel loader marked `torch._dynamo.allow_in_graph`: Dynamo puts the call in the graph without
# its checks, but AOTAutograd and Inductor still trace the body. The print runs once while the
# graph is traced and never again on later calls, which is worse than a graph break: it is silent.
# tcfix: TCF101 on the print in `ensure_kernel_loaded`.
import torch
from torch import nn


@torch._dynamo.allow_in_graph
def ensure_kernel_loaded(x: torch.Tensor) -> torch.Tensor:
    print("loading kernel for", x.dtype)
    return x


class Expert(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.up = nn.Linear(dim, 4 * dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = ensure_kernel_loaded(x)
        return self.up(x).relu()
