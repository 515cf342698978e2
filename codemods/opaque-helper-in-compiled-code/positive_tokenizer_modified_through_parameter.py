# The tokenizer is stored first and then changed through the PARAMETER name
# (`tokenizer.add_special_tokens(...)`), not through `self.tokenizer`: the same object, so the
# `<image>` token exists only after that line.
# tcfix: TCF102 (high); the cache line must go after `tokenizer.add_special_tokens(...)` (or the
# fix must not be offered as safe). Caching right after `self.tokenizer = tokenizer` would store
# the id of an unknown token.
import torch
from torch import nn


class VLM(nn.Module):
    def __init__(self, tokenizer, language_model, vision_encoder):
        super().__init__()
        self.tokenizer = tokenizer
        tokenizer.add_special_tokens({"additional_special_tokens": ["<image>"]})
        language_model.resize_token_embeddings(len(tokenizer))
        self.language_model = language_model
        self.vision_encoder = vision_encoder

    def forward(self, input_ids, pixel_values):
        image_embeds = self.vision_encoder(pixel_values)
        embeds = self.language_model.get_input_embeddings()(input_ids)
        mask = (input_ids == self.tokenizer.image_token_id).unsqueeze(-1)
        return self.language_model(inputs_embeds=embeds.masked_scatter(mask, image_embeds))
