"""TCF109 positive: the scripted module is called in a loop of a helper that forward calls
(critical), with `from torch import jit`."""
from torch import jit, nn


class Gate(nn.Module):
    def forward(self, x):
        return x.sigmoid() * x


class Stack(nn.Module):
    def __init__(self, dim: int = 16, depth: int = 3):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])
        self.gate = jit.script(Gate())

    def _run(self, x):
        for layer in self.layers:
            x = self.gate(layer(x))
        return x

    def forward(self, x):
        return self._run(x)
