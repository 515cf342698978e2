"""SpecAugment-style masking: a module-level helper reads the lengths from `attention_mask` with
`.tolist()` when one is given. Its only caller passes `attention_mask=attention_mask`, its own
parameter, which defaults to None and which `forward` never passes: the mask is None on every
call, the `else` side of the conditional expression runs, and nothing is read back to the host."""
import torch
from torch import nn


def span_starts(shape, mask_prob, attention_mask: torch.Tensor | None = None):
    batch, length = shape
    lengths = attention_mask.sum(-1).tolist() if attention_mask is not None else [length] * batch
    return [int(n * mask_prob) for n in lengths]


class Masker(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.fill = nn.Parameter(torch.zeros(dim))

    def _mask_frames(self, frames, attention_mask: torch.Tensor | None = None):
        starts = span_starts(frames.shape[:2], 0.05, attention_mask=attention_mask)
        for row, start in enumerate(starts):
            frames[row, start] = self.fill
        return frames

    def forward(self, frames: torch.Tensor):
        return self._mask_frames(frames)
