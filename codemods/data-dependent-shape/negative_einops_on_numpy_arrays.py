"""einops gives back what it was given: rearranged integer positions are an index, not a mask
(`flat[order]` has a fixed shape; measured with torch 2.15 and einops 0.8.2: one graph, no
break), and a rearranged numpy array in a data helper is no tensor at all.
tcfix: nothing."""
import numpy as np
from einops import rearrange
from torch import nn


class TokenReorder(nn.Module):
    def forward(self, x, scores):
        order = rearrange(scores.argsort(dim=-1), "b n -> (b n)")
        flat = rearrange(x, "b n d -> (b n) d")
        return flat[order]


def bright_patches(images: np.ndarray):
    patches = rearrange(images, "b h w -> b (h w)")
    return patches[patches.mean(axis=1) > 0.5]
