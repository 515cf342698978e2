"""Values that look like tensors but are Python values (trimmed from transformers: reformer's seed,
prophetnet's `torch.ones(inputs_shape)`, timesformer's tuple from a submodule)."""
import sys

import torch
from torch import nn


class PatchEmbed(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, pixel_values):
        batch, frames, dim = pixel_values.shape
        return self.proj(pixel_values), frames, dim


class VideoEncoder(nn.Module):
    def __init__(self, dim: int = 8, padding_idx: int = 1):
        super().__init__()
        self.patch_embeddings = PatchEmbed(dim)
        self.padding_idx = padding_idx

    def forward(self, pixel_values, inputs_shape, device=None):
        seed = int(torch.seed() % sys.maxsize)
        embeddings, num_frames, width = self.patch_embeddings(pixel_values)
        frames = int(num_frames)
        positions = torch.ones(inputs_shape, dtype=torch.long, device=device)
        offset = int(self.padding_idx + inputs_shape[1])
        return embeddings[:, :frames] + positions[..., None] * offset + seed * 0


class PlaceholderCheck(nn.Module):
    """`int(n)` in the message lambda of `torch._check` runs only when the check fails (neomme)."""

    def forward(self, input_ids: torch.Tensor, image_features: torch.Tensor) -> torch.Tensor:
        num_image_tokens = (input_ids == 5).sum()
        torch._check(
            num_image_tokens == image_features.shape[0],
            lambda: f"Got {image_features.shape[0]} image patches for {int(num_image_tokens)} placeholders",
        )
        return image_features
