import torch
from torch import nn


class MultiCrop(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.backbone = nn.Linear(dim, dim)

    def forward(self, crops):
        if not isinstance(crops, (list, tuple)):
            crops = [crops]
        feats = [self.backbone(c) for c in crops]
        return torch.stack(feats).sum(0) / len(crops)
