"""No name bound to `torch`: the fix adds `import torch` for `torch.where`."""
from torch import Tensor, nn


class Softcap(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: Tensor) -> Tensor:
        logits = self.fc(x)
        if logits.abs().amax() > 30.0:
            logits = logits.tanh() * 30.0
        return logits
