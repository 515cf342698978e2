"""A forward that calls a method of its submodule other than `forward`
(`self.encoding.at(points)`). Dynamo inlines that method as it inlines the submodule's `forward`,
so the print in it breaks the compiled forward's graph in two (measured under torch 2.15: 2
graphs, 2 breaks over three calls). Found, in the method."""
import torch
from torch import nn


class PointEncoding(nn.Module):
    def __init__(self, features: int = 8):
        super().__init__()
        self.register_buffer("frequencies", torch.randn(2, features))

    def at(self, points: torch.Tensor) -> torch.Tensor:
        print("encoding", points.shape[1], "points")
        return torch.sin(points @ self.frequencies)


class PointPrompts(nn.Module):
    def __init__(self, features: int = 8):
        super().__init__()
        self.encoding = PointEncoding(features)
        self.proj = nn.Linear(features, features)

    def forward(self, points):
        return self.proj(self.encoding.at(points))
