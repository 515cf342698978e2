"""TCF303 positive: a training script compiles with dynamic=False, then feeds batches padded to
their longest sequence: every new length compiles again, and after 8 the model runs eagerly."""
import torch
from torch import nn


def train(model: nn.Module, loader, optimizer):
    compiled = torch.compile(model, mode="max-autotune", dynamic=False)
    for input_ids, labels in loader:
        logits = compiled(input_ids)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
