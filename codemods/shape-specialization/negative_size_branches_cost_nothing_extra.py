"""Two branches on a size that look like specialization but cost no graph of their own. A ViT whose
position table was learned for one image size keeps it when `npatch == N` (the DINO-style
`interpolate_pos_encoding`); a decoder builds a causal mask only for prefill (`if seqlen > 1:`).
Measured under torch 2.15 with the default settings: 2 graphs over 4 resolutions with or without
the first branch, 3 graphs over prefill and decode lengths with or without the second (a length of
1 always gets its own graph). The cost is the size change's, not the branch's."""
import math

import torch
from torch import nn
from torch.nn import functional as F


class PatchEncoder(nn.Module):
    def __init__(self, dim: int, patch: int, grid: int):
        super().__init__()
        self.patch = patch
        self.proj = nn.Conv2d(3, dim, patch, patch)
        self.pos_embed = nn.Parameter(torch.zeros(1, grid * grid + 1, dim))

    def resize_positions(self, x, w, h):
        npatch = x.shape[1] - 1
        N = self.pos_embed.shape[1] - 1
        if npatch == N and w == h:
            return self.pos_embed
        side = int(math.sqrt(N))
        table = self.pos_embed[:, 1:].reshape(1, side, side, -1).permute(0, 3, 1, 2)
        table = F.interpolate(table, size=(h // self.patch, w // self.patch), mode="bicubic")
        table = table.permute(0, 2, 3, 1).flatten(1, 2)
        return torch.cat([self.pos_embed[:, :1], table], dim=1)

    def forward(self, images):
        _, _, h, w = images.shape
        x = self.proj(images).flatten(2).transpose(1, 2)
        x = torch.cat([x.new_zeros(x.shape[0], 1, x.shape[2]), x], dim=1)
        return x + self.resize_positions(x, w, h)


class PrefillMask(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, tokens: torch.Tensor):
        seqlen = tokens.shape[1]
        scores = self.proj(tokens) @ tokens.transpose(1, 2)
        if seqlen > 1:
            scores = scores + torch.full((seqlen, seqlen), float("-inf"), device=tokens.device).triu(1)
        return scores.softmax(-1)
