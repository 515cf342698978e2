# The guard is computed once into a local (`compiling = torch.compiler.is_compiling()`) and tested
# twice. Under torch.compile `compiling` is the constant True, so both prints are dead code there.
# tcfix: no TCF101 finding.
import torch
from torch import nn


class Mixer(nn.Module):
    def __init__(self, tokens: int, dim: int):
        super().__init__()
        self.token_mix = nn.Linear(tokens, tokens)
        self.channel_mix = nn.Linear(dim, dim)

    def forward(self, x):
        compiling = torch.compiler.is_compiling()
        x = x + self.token_mix(x.transpose(1, 2)).transpose(1, 2)
        if not compiling:
            print("after token mixing", x.std())
        x = x + self.channel_mix(x)
        if not compiling:
            print("after channel mixing", x.std())
        return x
