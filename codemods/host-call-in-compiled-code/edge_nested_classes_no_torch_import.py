"""TCF107 edge: a module class nested in a factory function, in a file that never imports torch
itself (only `from torch import nn`), with the clock read in a forward hook."""
import time

from torch import nn


def build(dim: int):
    class Probe(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(dim, dim)

        def forward(self, x):
            return self.fc(x) * time.time_ns()

    probe = Probe()
    probe.register_forward_hook(lambda module, inputs, output: time.process_time())
    return probe
