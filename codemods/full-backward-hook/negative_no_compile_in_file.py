"""TCF110 negative: a debugging utility registers backward hooks on any model it is given, in a
file that never compiles anything; tensor hooks (`register_hook`) in forward are traced; and
`re.compile` is not torch.compile."""
import re

import torch
from torch import nn

LAYER = re.compile(r"layers\.(\d+)")


def watch_gradients(model: nn.Module):
    norms = {}
    for name, module in model.named_modules():
        module.register_full_backward_hook(lambda m, gi, go, name=name: norms.__setitem__(name, go[0].norm()))
    return norms


class TensorHooked(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.norms = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x)
        if y.requires_grad:
            y.register_hook(lambda grad: grad * 1.0)
        return y
