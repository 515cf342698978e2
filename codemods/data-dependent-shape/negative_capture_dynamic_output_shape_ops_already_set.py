"""The module turns `capture_dynamic_output_shape_ops` on (through `from torch._dynamo import config`):
the reads through the mask, `nonzero()` and `unique()` trace with unbacked sizes, so nothing is
reported."""
import torch
import torch.nn.functional as F
from torch import nn
from torch._dynamo import config

config.capture_dynamic_output_shape_ops = True


class MaskedHead(nn.Module):
    def __init__(self, dim: int = 8, vocab: int = 10):
        super().__init__()
        self.decoder = nn.Linear(dim, vocab)

    def forward(self, hidden: torch.Tensor, labels: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        masked = labels != -100
        loss = F.cross_entropy(self.decoder(hidden[masked]), labels[masked])
        positions = (ids == 3).nonzero()
        return loss + positions.numel() + torch.unique(ids).numel()
