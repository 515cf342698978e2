# A print inside a list comprehension in forward (used for its side effect).
# It is an expression, not a statement of its own: it cannot be wrapped.
# tcfix: TCF101 reported WITHOUT a fix.
import torch
from torch import nn


class MultiHead(nn.Module):
    def __init__(self, dim: int, tasks: int):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(dim, 1) for _ in range(tasks)])

    def forward(self, x):
        outputs = [head(x) for head in self.heads]
        [print(i, out.shape) for i, out in enumerate(outputs)]
        return torch.cat(outputs, dim=-1)
