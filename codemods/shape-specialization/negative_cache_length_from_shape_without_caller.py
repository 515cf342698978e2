"""A GPT-2-era decoder that takes the past keys and values as a tuple of tensors and reads how many
tokens came before from the cache's shape. Generation grows the cache by one token per decode
step, and then the first new length compiles a second graph; but no code of this file calls the
decoder, and its own code shows no window into a buffer of its own, so nothing says the cache
grows: a known blind spot (the generation loop lives in another file, which tcfix does not read
for this). A name like `past_key_values` decides nothing."""
import torch
from torch import nn


class OldStyleDecoder(nn.Module):
    def __init__(self, vocab: int, dim: int, max_positions: int):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Embedding(max_positions, dim)

    def forward(self, input_ids, past_key_values=None):
        if past_key_values is None:
            past_length = 0
        else:
            past_length = past_key_values[0][0].size(-2)
        position_ids = torch.arange(past_length, input_ids.shape[-1] + past_length, device=input_ids.device)
        return self.tokens(input_ids) + self.positions(position_ids)
