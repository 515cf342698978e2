"""Trimmed from transformers 5.23 (M2M100 and friends): `nn.Buffer(...)` and `nn.Parameter(...)`
are tensors, not modules; regrowing them is TCF201's / TCF207's business."""
import math

import torch
from torch import nn


class SinusoidalPositionalEmbedding(nn.Module):
    def __init__(self, num_positions, embedding_dim, padding_idx=None):
        super().__init__()
        self.offset = 2
        self.embedding_dim = embedding_dim
        self.make_weights(num_positions + self.offset, embedding_dim)

    def make_weights(self, num_embeddings, embedding_dim):
        half = embedding_dim // 2
        emb = torch.exp(torch.arange(half, dtype=torch.float) * -(math.log(10000) / (half - 1)))
        emb = torch.arange(num_embeddings, dtype=torch.float).unsqueeze(1) * emb.unsqueeze(0)
        self.weights = nn.Buffer(torch.cat([torch.sin(emb), torch.cos(emb)], dim=1), persistent=False)

    def forward(self, input_ids):
        bsz, seq_len = input_ids.size()
        max_pos = seq_len + self.offset
        if max_pos > self.weights.size(0):
            self.make_weights(max_pos, self.embedding_dim)
        return self.weights.index_select(0, input_ids.view(-1)).view(bsz, seq_len, -1)
