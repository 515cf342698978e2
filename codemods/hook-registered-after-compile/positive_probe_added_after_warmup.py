"""TCF301 positive: a training script compiles the model, runs a warm-up step, then registers an
activation probe on a block. The compiled graph never runs the probe: `activations` stays empty."""
import torch
from torch import nn


def train(model: nn.Module, loader, optimizer):
    compiled = torch.compile(model, mode="max-autotune")
    warmup_x, _ = next(iter(loader))
    compiled(warmup_x)
    activations = []
    model.blocks[3].register_forward_hook(lambda module, inputs, output: activations.append(output.detach()))
    for x, y in loader:
        loss = nn.functional.cross_entropy(compiled(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return activations
