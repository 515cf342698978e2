"""False alarms found in transformers, trimmed: a tuple element from a submodule (timesformer), a
parameter whose annotation lies but whose default is a bool (fastspeech2), a parameter with an int
default later rebound to a tensor (vilt), and `not is_compiling() and ...` (qwen2-audio), which
Dynamo never evaluates past the first operand."""
import torch
from torch import nn


class PatchEmbed(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, pixel_values):
        batch, frames, dim = pixel_values.shape
        return self.proj(pixel_values), frames, dim


def is_torchdynamo_compiling():
    return torch.compiler.is_compiling()


class VideoModel(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.patch_embeddings = PatchEmbed(dim)
        self.time_embeddings = nn.Parameter(torch.zeros(1, 4, dim))

    def forward(
        self,
        pixel_values,
        legacy: torch.Tensor,
        output_attentions: torch.Tensor | None = False,
        max_image_length=200,
    ):
        embeddings, num_frames, width = self.patch_embeddings(pixel_values)
        if num_frames != self.time_embeddings.size(1):
            embeddings = embeddings[:, :4]
        if max_image_length < 0 or max_image_length is None:
            max_image_length = embeddings.abs().max()
        if not is_torchdynamo_compiling() and legacy.any():
            embeddings = embeddings * 2
        if output_attentions:
            return embeddings, None
        return embeddings
