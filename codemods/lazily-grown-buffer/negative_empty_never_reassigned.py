"""TCF201 negative: an empty buffer used only as a device/dtype anchor (`torch.empty(0)`), read in
`forward` but never reassigned. Its size never changes, so its guard never fails.

tcfix should report nothing for TCF201.
"""
import torch
from torch import nn


class PatchEmbed(nn.Module):
    def __init__(self, in_chans: int = 3, embed_dim: int = 256, patch_size: int = 16):
        super().__init__()
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
        self.register_buffer("_anchor", torch.empty(0), persistent=False)
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1), persistent=False)

    @property
    def device(self) -> torch.device:
        return self._anchor.device

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        images = images.to(device=self._anchor.device, dtype=self._anchor.dtype)
        x = self.proj(images - self.mean)
        return x.flatten(2).transpose(1, 2)
