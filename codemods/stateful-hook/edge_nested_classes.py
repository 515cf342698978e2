"""TCF202 edge: method hooks in nested classes — a monitor class nested in a model class, and a
module class defined inside a factory function — each reading a flag that one of its methods sets.

tcfix should report both reads and put `@torch.compiler.disable` above each `def _hook`, indented for
its nesting depth.
"""
import torch
from torch import nn


class Classifier(nn.Module):
    class Monitor:
        def __init__(self, layer: nn.Module):
            self.active = False
            self.maxima: list[torch.Tensor] = []
            layer.register_forward_hook(self._hook)

        def start(self) -> None:
            self.active = True

        def _hook(self, module, inputs, output):
            if self.active:
                self.maxima.append(output.detach().abs().amax())

    def __init__(self, dim: int = 32, classes: int = 5):
        super().__init__()
        self.body = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, classes)
        self.monitor = Classifier.Monitor(self.body)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.body(x)))


def make_gated_block(dim: int) -> nn.Module:
    class GatedBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(dim, dim)
            self.gate_open = True
            self.proj.register_forward_hook(self._hook)

        def close_gate(self) -> None:
            self.gate_open = False

        def _hook(self, module, inputs, output):
            return output if self.gate_open else torch.zeros_like(output)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + self.proj(x)

    return GatedBlock()
