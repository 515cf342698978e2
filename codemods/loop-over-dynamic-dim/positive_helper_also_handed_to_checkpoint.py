"""A tiling helper called two ways: directly with too few arguments on a path the defaults never
take, and handed to activation checkpointing with all of them on the default path. The direct
call alone would raise TypeError, but the reference `self.scan_tiles` passed to `checkpoint` runs
it: its loop over the input's width is unrolled for each width (measured under torch 2.15: 3
graphs for 3 widths). A function the file also names outside a call may run where no call site
shows, so the finding stays, with no condition."""
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class TileScanner(nn.Module):
    def __init__(self, checkpointed: bool = True):
        super().__init__()
        self.inner = nn.Identity()
        self.checkpointed = checkpointed

    def scan_tiles(self, x, tile, step):
        out = torch.zeros_like(x)
        for start in range(0, x.shape[1], step):
            out[:, start : start + tile] = self.inner(x[:, start : start + tile])
        return out

    def forward(self, x):
        if self.checkpointed:
            return checkpoint(self.scan_tiles, x, 4, 4, use_reentrant=False)
        return self.scan_tiles(x)


model = torch.compile(TileScanner())
