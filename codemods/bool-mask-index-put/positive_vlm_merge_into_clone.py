"""A VLM merges image features into a clone of the text embeddings (kosmos-2.5 pattern)."""
import torch
from torch import nn


class Merger(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = 16, image_token_id: int = 3):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.image_proj = nn.Linear(dim, dim)
        self.image_token_id = image_token_id

    def forward(self, input_ids: torch.Tensor, image_embeds: torch.Tensor = None) -> torch.Tensor:
        inputs_embeds = self.embed_tokens(input_ids)
        if image_embeds is not None:
            inputs_embeds = inputs_embeds.clone()
            inputs_embeds[input_ids == self.image_token_id] = self.image_proj(image_embeds)
        return inputs_embeds
