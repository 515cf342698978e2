# A class decorator swaps the experts' `forward` for a dispatcher that runs the implementation the
# config names (a fused kernel by default); the class's own per-expert loop is only handed on as a
# fallback, never called by the dispatcher itself. Dynamo traces the dispatcher, not the loop.
# tcfix: no TCF101 finding.
import torch
from torch import nn

KERNELS = {}


def dispatched_experts(cls):
    plain_forward = cls.forward

    def forward(self, *args, **kwargs):
        run = KERNELS.get(self.kernel_name, plain_forward)
        return run(self, *args, **kwargs)

    cls.forward = forward
    return cls


@dispatched_experts
class Experts(nn.Module):
    def __init__(self, experts: int, dim: int, kernel_name: str = "fused"):
        super().__init__()
        self.kernel_name = kernel_name
        self.weights = nn.Parameter(torch.randn(experts, dim, dim))

    def forward(self, x: torch.Tensor, expert_ids: torch.Tensor) -> torch.Tensor:
        out = torch.zeros_like(x)
        for e in range(self.weights.shape[0]):
            rows = expert_ids == e
            print("expert", e)
            out = out + rows.unsqueeze(-1) * (x @ self.weights[e])
        return out
