"""Several conversions in one file, nested classes, a helper called from forward, a hook."""
import torch
from torch import nn


class Outer:
    class Gate(nn.Module):
        def __init__(self, dim: int = 8):
            super().__init__()
            self.fc = nn.Linear(dim, dim)

        def _temperature(self, logits: torch.Tensor) -> float:
            return logits.std().item()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            logits = self.fc(x)
            t = self._temperature(logits)
            probs = torch.softmax(logits / t, dim=-1)
            return probs * logits.abs().max().item()


def clip_hook(module, inputs, output):
    limit = output.abs().mean()
    return output.clamp(-3 * limit.item(), 3 * limit.item())


def install(model: nn.Module) -> None:
    model.register_forward_hook(clip_hook)
