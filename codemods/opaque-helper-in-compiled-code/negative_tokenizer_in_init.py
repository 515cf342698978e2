# The tokenizer is consulted in __init__ only (vocabulary size, pad id for the embedding); forward
# uses the values stored from it.
# tcfix: no TCF102 finding.
import torch
from torch import nn


class Embeddings(nn.Module):
    def __init__(self, tokenizer, dim: int):
        super().__init__()
        self.tokenizer = tokenizer
        self.pad_id = self.tokenizer.pad_token_id
        self.embed = nn.Embedding(len(self.tokenizer), dim, padding_idx=self.tokenizer.pad_token_id)

    def forward(self, input_ids):
        mask = (input_ids != self.pad_id).unsqueeze(-1)
        return self.embed(input_ids) * mask
