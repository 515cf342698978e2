"""TCF104 positive: the skip decision is kept in a flag that is False by default and a tensor once
the draw ran (in training). The test of the flag then reads tensor data: the graph breaks, and in
the loop over blocks Dynamo runs the whole forward eagerly (measured under torch 2.15). No fix:
`torch.where` needs a tensor on every path."""
import torch
from torch import nn


class Stack(nn.Module):
    def __init__(self, blocks, drop_rate: float = 0.2):
        super().__init__()
        self.blocks = nn.ModuleList(blocks)
        self.drop_rate = drop_rate

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            dropped = False
            if self.training and self.drop_rate > 0:
                draw = torch.rand(())
                dropped = draw < self.drop_rate
            if not dropped:
                h = block(h)
        return h

    def count_kept(self, h: torch.Tensor) -> int:
        # A flag only ever bound to Python bools is not a tensor test.
        kept = 0
        for block in self.blocks:
            wide = False
            if h.shape[-1] > 4:
                wide = True
            if not wide:
                kept += 1
        return kept
