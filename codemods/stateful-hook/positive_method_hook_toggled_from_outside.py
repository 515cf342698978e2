"""TCF202 positive: a plain monitor object registers its bound method `self._record` on every block;
the hook reads `self.enabled`, which no method of the class changes — the training loop flips it
directly (`monitor.enabled = step % 100 == 0`).

Dynamo guards on `enabled` all the same; each flip recompiles. tcfix should report the read of
`self.enabled` and offer `@torch.compiler.disable` above `def _record`.
"""
import torch
from torch import nn


class ActivationMonitor:
    def __init__(self, model: nn.Module):
        self.enabled = False
        self.rms: list[torch.Tensor] = []
        self.handles = [block.register_forward_hook(self._record) for block in model.blocks]

    def _record(self, module, inputs, output):
        if self.enabled:
            self.rms.append(output.detach().pow(2).mean().sqrt())


def train(model: nn.Module, loader, optimizer):
    monitor = ActivationMonitor(model)
    compiled = torch.compile(model)
    for step, (x, y) in enumerate(loader):
        monitor.enabled = step % 100 == 0
        loss = nn.functional.mse_loss(compiled(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
