# A library helper that skips its padding check when a tracer runs: its own `is_tracing(x)` is
# true under Dynamo (it asks `torch.compiler.is_compiling()` among others), so under compile the
# helper returns before the warning, and a check under `not is_tracing(...)` never runs either.
# tcfix: no TCF101 finding.
import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


def is_tracing(tensor=None) -> bool:
    return torch.compiler.is_compiling() or torch.jit.is_tracing()


def warn_if_padded_without_mask(input_ids: torch.Tensor, pad_id: int) -> None:
    if is_tracing(input_ids):
        return
    if (input_ids == pad_id).any():
        logger.warning("padding found but no attention mask given")


class Encoder(nn.Module):
    def __init__(self, vocab: int, dim: int, pad_id: int = 0):
        super().__init__()
        self.pad_id = pad_id
        self.embed = nn.Embedding(vocab, dim)

    def forward(self, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        warn_if_padded_without_mask(input_ids, self.pad_id)
        if not is_tracing(mask) and bool(mask.all()):
            print("mask keeps every token")
        return self.embed(input_ids) * mask.unsqueeze(-1)
