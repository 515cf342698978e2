import torch
from torch import nn


class TokenMixer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        out = []
        for t in range(x.shape[1]):
            out.append(self.fc(x[:, t]))
        return torch.stack(out, dim=1)
