"""Helpers annotated as taking tensors whose every caller in the file passes Python sizes: a
tuple of `(frames, height, width)` read from shapes, or one length `mask.shape[-1]`. The callers
decide what the value is: `int(...)` of them is plain Python arithmetic, not a tensor read back to
the host, so nothing breaks the graph. (A helper another file also calls keeps its annotation.)"""
import torch
from torch import nn


def kept_tokens(thw: torch.LongTensor, ratio: float):
    frames, height, width = thw
    return int(frames * height * width * (1 - ratio))


class Pruner(nn.Module):
    def _output_length(self, input_lengths: torch.LongTensor):
        return int((input_lengths - 3) / 2 + 1)

    def forward(self, video: torch.Tensor, mask: torch.Tensor):
        keep = kept_tokens((video.shape[0], video.shape[2], video.shape[3]), 0.5)
        length = self._output_length(mask.shape[-1])
        return video.flatten(1)[:, :keep], length
