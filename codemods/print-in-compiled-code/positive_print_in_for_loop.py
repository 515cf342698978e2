# A print inside the `for` loop over the blocks of forward: a graph break in a loop makes Dynamo
# skip the whole frame (GB7000), so all of forward runs eagerly.
# tcfix: TCF101 reported as CRITICAL, fix guards the print inside the loop body.
import torch
from torch import nn


class Transformer(nn.Module):
    def __init__(self, dim: int, depth: int, heads: int):
        super().__init__()
        self.blocks = nn.ModuleList(
            [nn.TransformerEncoderLayer(dim, heads, batch_first=True) for _ in range(depth)]
        )
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        for i, block in enumerate(self.blocks):
            x = block(x)
            print(f"block {i}: {x.norm():.3f}")
        return self.norm(x)
