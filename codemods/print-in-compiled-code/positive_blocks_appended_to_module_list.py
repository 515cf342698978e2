import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


class TwoWayAttentionBlock(nn.Module):
    def __init__(self, dim: int, skip_first_layer_pe: bool = False):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.skip_first_layer_pe = skip_first_layer_pe

    def forward(self, queries, attention_similarity=None):
        if attention_similarity is not None:
            logger.warning_once("Falling back to SDPA for target-guided attention.")
        return queries + self.proj(queries)


class VisionLayer(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.mlp = nn.Linear(dim, dim)

    def forward(self, x, output_attentions=False):
        if output_attentions:
            logger.warning_once("VisionLayer does not return attention weights.")
        return x + self.mlp(x)


class TwoWayTransformer(nn.Module):
    """Trimmed from transformers' sam/sam2: the blocks go into an empty ModuleList one by one,
    directly or through a local, and forward runs them in a loop."""

    def __init__(self, dim: int, depth: int):
        super().__init__()
        self.layers = nn.ModuleList()
        for i in range(depth):
            self.layers.append(TwoWayAttentionBlock(dim, skip_first_layer_pe=(i == 0)))
        self.vision_layers = nn.ModuleList()
        for _ in range(depth):
            layer = VisionLayer(dim)
            self.vision_layers.append(layer)

    def forward(self, queries, attention_similarity=None):
        for layer in self.layers:
            queries = layer(queries, attention_similarity)
        for layer in self.vision_layers:
            queries = layer(queries)
        return queries
