"""Text embeddings whose `forward` takes the number of cached tokens as an int argument and slices a
table of position ids with it, as many BERT-derived decoders do. The argument advances at every
decode step: one extra graph before Dynamo makes it dynamic."""
import torch
from torch import nn


class TextEmbeddings(nn.Module):
    def __init__(self, vocab: int, dim: int, max_positions: int):
        super().__init__()
        self.words = nn.Embedding(vocab, dim)
        self.positions = nn.Embedding(max_positions, dim)
        self.register_buffer("position_ids", torch.arange(max_positions).expand((1, -1)), persistent=False)

    def forward(self, input_ids: torch.Tensor, past_key_values_length: int = 0):
        seq_length = input_ids.size(1)
        ids = self.position_ids[:, past_key_values_length : seq_length + past_key_values_length]
        return self.words(input_ids) + self.positions(ids)
