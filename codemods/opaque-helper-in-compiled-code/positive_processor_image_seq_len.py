# `self.processor.image_seq_len` (an Idefics3-style processor attribute) read in forward.
# tcfix: TCF102 (high); fix caches `self.image_seq_len_` in __init__.
import torch
from torch import nn


class ImageSplicer(nn.Module):
    def __init__(self, processor, dim: int):
        super().__init__()
        self.processor = processor
        self.connector = nn.Linear(dim, dim)

    def forward(self, image_features):
        batch, _, dim = image_features.shape
        tokens = self.connector(image_features)
        return tokens.reshape(batch, -1, self.processor.image_seq_len, dim)
