"""TCF302 positive: the training script saves the compiled wrapper's state_dict: every key is
saved as `_orig_mod.<name>`, and the checkpoint does not load into the plain model."""
import torch
from torch import nn


def train(model: nn.Module, loader, optimizer, path: str):
    compiled = torch.compile(model)
    for x, y in loader:
        loss = nn.functional.mse_loss(compiled(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    torch.save(compiled.state_dict(), path)
