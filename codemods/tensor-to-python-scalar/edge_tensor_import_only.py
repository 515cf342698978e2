"""No `import torch`: only `from torch import Tensor, nn`. The fix needs no import."""
from torch import Tensor, nn


class Shift(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: Tensor, bias: Tensor) -> Tensor:
        return self.fc(x) + bias.mean().item()
