"""`.numpy()` is traced by Dynamo (no graph break in torch 2.15), and `.item()` / `.tolist()` on
values that are not known tensors (a numpy array, a dict's items) are not this rule's business."""
import numpy as np
import torch
from torch import nn


class Normalizer(nn.Module):
    def __init__(self, stats: dict):
        super().__init__()
        self.stats = stats
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = x.detach().numpy()
        mean = np.float64(values.mean())
        names = [name for name, _ in self.stats.items()]
        return self.fc(x) - torch.as_tensor(values).mean() * len(names) * 0
