"""TCF109 positive: a scripted feed-forward block inside a module whose forward is compiled.
Dynamo cannot trace the ScriptModule: the frame that calls it runs eagerly."""
import torch
from torch import nn


class FeedForward(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim: int = 64):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ffn = torch.jit.script(FeedForward(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.ffn(self.norm(x))
