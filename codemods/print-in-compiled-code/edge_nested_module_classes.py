# Module classes that are not at the top level: one defined inside another class, one defined in a
# factory function (a common test / config pattern). Their forward is traced like any other.
# tcfix: TCF101 (high) in `Model.Head.forward` and in `make_block.<locals>.Block.forward`; both
# guarded at the right (deeper) indentation.
import torch
from torch import nn


class Model(nn.Module):
    class Head(nn.Module):
        def __init__(self, dim: int, classes: int):
            super().__init__()
            self.fc = nn.Linear(dim, classes)

        def forward(self, x):
            print("Head input", x.shape)
            return self.fc(x)

    def __init__(self, dim: int = 32, classes: int = 10):
        super().__init__()
        self.body = make_block(dim)
        self.head = Model.Head(dim, classes)

    def forward(self, x):
        return self.head(self.body(x))


def make_block(dim: int, act=nn.GELU):
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(dim, dim)
            self.act = act()

        def forward(self, x):
            print("Block", dim, x.shape)
            return self.act(self.fc(x))

    return Block()
