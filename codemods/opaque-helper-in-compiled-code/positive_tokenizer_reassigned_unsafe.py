# The tokenizer can be swapped after construction (`set_tokenizer`): a value cached in __init__
# could go stale.
# tcfix: TCF102 (high); the fix is UNSAFE (applied only with --unsafe-fixes) and its title names
# `set_tokenizer`.
import torch
from torch import nn


class CaptionModel(nn.Module):
    def __init__(self, decoder, tokenizer):
        super().__init__()
        self.decoder = decoder
        self.tokenizer = tokenizer

    def set_tokenizer(self, tokenizer):
        self.tokenizer = tokenizer

    def forward(self, input_ids, image_embeds):
        embeds = self.decoder.embed_tokens(input_ids)
        mask = (input_ids == self.tokenizer.image_token_id).unsqueeze(-1)
        return self.decoder(inputs_embeds=embeds.masked_scatter(mask, image_embeds))
