"""TCF109 negative: a scripted module kept for export and never called from forward, a scripted
module in a plain (non-Module) class, and scripting at module level for deployment."""
import torch
from torch import nn


class Head(nn.Module):
    def forward(self, x):
        return x.mean(-1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.exported_head = torch.jit.script(Head())

    def forward(self, x):
        return self.fc(x)


class Exporter:
    def __init__(self, model):
        self.scripted = torch.jit.script(model)

    def forward(self, x):
        return self.scripted(x)


deployable = torch.jit.script(Head())
