# `self.tokenizer.image_token_id` read in forward: the HF tokenizer property calls the Rust
# `token_to_id`, which Dynamo cannot trace (GB0156), on every call.
# tcfix: TCF102 (high); fix caches `self.image_token_id_ = self.tokenizer.image_token_id` in
# __init__ right after `self.tokenizer = tokenizer` and reads `self.image_token_id_` in forward.
import torch
from torch import nn


class ImageTextEmbedder(nn.Module):
    def __init__(self, tokenizer, vocab_size: int, dim: int):
        super().__init__()
        self.tokenizer = tokenizer
        self.token_embedding = nn.Embedding(vocab_size, dim)

    def forward(self, input_ids, image_embeds):
        embeds = self.token_embedding(input_ids)
        image_mask = (input_ids == self.tokenizer.image_token_id).unsqueeze(-1)
        return embeds.masked_scatter(image_mask, image_embeds.to(embeds.dtype))
