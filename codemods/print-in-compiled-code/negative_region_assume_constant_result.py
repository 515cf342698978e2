# A device probe under `torch._dynamo.assume_constant_result` runs once at trace time and its
# result is inlined as a constant: Dynamo does not trace the probe, so the print inside it is no
# graph break.
# tcfix: no TCF101 finding.
import torch
from torch import nn


@torch._dynamo.assume_constant_result
def is_new_gpu() -> bool:
    major, _ = torch.cuda.get_device_capability() if torch.cuda.is_available() else (0, 0)
    print("device major:", major)
    return major >= 10


class Expert(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.up = nn.Linear(dim, 4 * dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.up(x)
        return h.relu() if is_new_gpu() else torch.nn.functional.gelu(h)
