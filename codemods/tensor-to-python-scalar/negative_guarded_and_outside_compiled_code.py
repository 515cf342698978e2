"""`.item()` where Dynamo does not trace: under `if not torch.compiler.is_compiling():`, in a
`@torch.compiler.disable` helper, and in the training loop."""
import torch
from torch import nn


class Regressor(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.fc = nn.Linear(dim, 1)
        self.last_norm = 0.0

    @torch.compiler.disable
    def record(self, out: torch.Tensor) -> None:
        self.last_norm = out.norm().item()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.fc(x)
        if not torch.compiler.is_compiling():
            self.last_norm = out.norm().item()
        self.record(out)
        return out


def train(model: Regressor, batches) -> float:
    total = 0.0
    for x, y in batches:
        loss = (model(x) - y).pow(2).mean()
        loss.backward()
        total += loss.item()
    return total
