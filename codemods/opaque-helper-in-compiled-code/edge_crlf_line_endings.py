# CRLF line endings: the cache line added to __init__ must end in \r\n like its neighbours.
# tcfix: TCF102 (high); fix inserts `self.image_token_id_ = ...` with \r\n and rewrites forward.
import torch
from torch import nn


class ImageTokenMerger(nn.Module):
    def __init__(self, tokenizer, dim: int):
        super().__init__()
        self.tokenizer = tokenizer
        self.proj = nn.Linear(dim, dim)

    def forward(self, input_ids, token_embeds, image_embeds):
        mask = (input_ids == self.tokenizer.image_token_id).unsqueeze(-1)
        return token_embeds.masked_scatter(mask, self.proj(image_embeds))
