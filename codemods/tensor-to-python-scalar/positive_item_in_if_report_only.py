"""A loss read as a Python number to decide whether to add an auxiliary term: no fix."""
import torch
import torch.nn.functional as F
from torch import nn


class Classifier(nn.Module):
    def __init__(self, dim: int = 32, classes: int = 10):
        super().__init__()
        self.head = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        logits = self.head(x)
        loss = F.cross_entropy(logits, labels)
        if loss.item() > 5.0:
            loss = loss + 0.1 * logits.pow(2).mean()
        return loss
