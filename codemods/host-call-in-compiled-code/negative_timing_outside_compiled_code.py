"""TCF107 negative: timing around the compiled call (the training loop), in `__init__`, and under
`if not torch.compiler.is_compiling():` is not compiled code."""
import time

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.created = time.time()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        if not torch.compiler.is_compiling():
            self.last_call = time.time()
        return self.fc(x)


def train(model, loader, optimizer):
    compiled = torch.compile(model)
    for x, y in loader:
        start = time.perf_counter()
        loss = torch.nn.functional.mse_loss(compiled(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"step took {time.perf_counter() - start:.3f}s")
