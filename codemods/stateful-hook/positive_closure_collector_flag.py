"""TCF202 positive: a forward hook defined as a closure reads `collector.capture_activation_norms`,
which the training loop flips on logging steps.

Dynamo guards on `...__closure__[0].cell_contents.capture_activation_norms`; every flip recompiles.
tcfix should report the read and offer the Safe fix `@torch.compiler.disable` above `def hook`.
"""
import torch
from torch import nn


class NormCollector:
    def __init__(self):
        self.capture_activation_norms = False
        self.norms: dict[str, list[torch.Tensor]] = {}


def install_norm_hooks(model: nn.Module, collector: NormCollector) -> list:
    handles = []
    for name, module in model.named_modules():
        if not isinstance(module, nn.Linear):
            continue

        def hook(mod, inputs, output, name=name):
            if collector.capture_activation_norms:
                collector.norms.setdefault(name, []).append(output.detach().norm())

        handles.append(module.register_forward_hook(hook))
    return handles


def train(model: nn.Module, loader, optimizer, log_every: int = 50):
    collector = NormCollector()
    install_norm_hooks(model, collector)
    compiled = torch.compile(model)
    for step, (x, y) in enumerate(loader):
        collector.capture_activation_norms = step % log_every == 0
        loss = nn.functional.cross_entropy(compiled(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return collector.norms
