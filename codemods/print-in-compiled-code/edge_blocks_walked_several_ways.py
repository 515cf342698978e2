import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        print("block", x.shape)
        return torch.relu(self.proj(x))


class Norm(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        print("norm", x.shape)
        return self.norm(x)


class Head(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        print("head", x.shape)
        return self.out(x)


class Tail(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        print("tail", x.shape)
        return self.out(x)


class Net(nn.Module):
    """Each block runs in a loop of forward, walked in a different way: zip, a ModuleDict's
    items(), an index into the list, reversed(). All four prints are critical."""

    def __init__(self, dim: int, depth: int):
        super().__init__()
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.norms = nn.ModuleList([Norm(dim) for _ in range(depth)])
        self.heads = nn.ModuleDict({"a": Head(dim), "b": Head(dim)})
        self.tails = nn.ModuleList([Tail(dim) for _ in range(depth)])

    def forward(self, x):
        for block, norm in zip(self.blocks, self.norms):
            x = norm(block(x))
        for name, head in self.heads.items():
            x = head(x)
        for i in range(len(self.tails)):
            tail = self.tails[i]
            x = tail(x)
        for block in reversed(self.blocks):
            x = block(x)
        return x
