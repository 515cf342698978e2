"""A forward that calls into library code that breaks the graph: the break's innermost frame is
in the library, and tcfix reports it at the call in forward, the first frame among the checked files."""
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vendor"))
from noisy_lib import log_stats  # noqa: E402


class Logged(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, x):
        x = self.linear(x)
        x = log_stats(x)
        return x.relu()


def main():
    model = torch.compile(Logged(), backend="eager")
    for _ in range(2):
        model(torch.randn(2, 4))


if __name__ == "__main__":
    main()
