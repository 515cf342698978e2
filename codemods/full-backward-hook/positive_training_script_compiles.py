"""TCF110 positive: a training script registers backward hooks on the layers of a model it then
compiles, including the legacy `register_backward_hook` (GB0104)."""
import torch
from torch import nn


def train(model: nn.Module, loader, optimizer):
    grads = {}
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear):
            module.register_full_backward_hook(lambda m, gi, go, name=name: grads.__setitem__(name, go[0].norm()))
    model.head.register_backward_hook(lambda m, gi, go: None)
    compiled = torch.compile(model)
    for x, y in loader:
        loss = nn.functional.cross_entropy(compiled(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return grads
