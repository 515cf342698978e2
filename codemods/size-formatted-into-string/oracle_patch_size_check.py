"""Oracle fixture for size-formatted-into-string (TCF209).

A ViT-style patch embedding built to take any image size (what timm's `dynamic_img_size=True` is
for) checks that the height and the width are multiples of the patch size with `torch._assert`,
whose message formats the size. Dynamo pins the size to format it, so each of 5 image sizes
compiles its own graph. The Safe fix builds the message only when the check fails: 2 graphs (the
first size, then one graph for every other size), outputs and gradients equal.
"""
import torch
from torch import _assert, nn


class PatchEmbed(nn.Module):
    def __init__(self, patch: int = 4, dim: int = 16):
        super().__init__()
        self.patch_size = (patch, patch)
        self.proj = nn.Conv2d(3, dim, kernel_size=patch, stride=patch)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, C, H, W = x.shape
        _assert(
            H % self.patch_size[0] == 0,
            f"Input height ({H}) should be divisible by patch size ({self.patch_size[0]}).",
        )
        _assert(W % self.patch_size[1] == 0, f"Input width ({W}) should be divisible by patch size ({self.patch_size[1]}).")
        return self.proj(x).flatten(2).transpose(1, 2)


def oracle_cases():
    images = [(torch.randn(2, 3, size, size),) for size in (16, 20, 24, 28, 32)]
    return [
        {
            "name": "inference",
            "factory": lambda: PatchEmbed().eval(),
            "inputs": images,
            "no_grad": True,
            "expect": {"graphs": (5, 2), "recompiles": (4, 1), "graph_breaks": (0, 0)},
        },
        {
            "name": "training",
            "factory": PatchEmbed,
            "inputs": images,
            "train": True,
            "expect": {"graphs": (5, 2), "recompiles": (4, 1), "graph_breaks": (0, 0)},
        },
    ]
