# __init__ already caches the id under the user's own name (`self.image_token_index`), but one
# helper still reads the tokenizer. The fix should reuse the existing attribute rather than add a
# second copy.
# tcfix: TCF102 (high); fix rewrites the helper to `self.image_token_index`, adds nothing. Unsafe:
# without the break the helper's masked write is traced with the rest of the frame (TCF105).
import torch
from torch import nn


class Idefics(nn.Module):
    def __init__(self, tokenizer, text_model):
        super().__init__()
        self.tokenizer = tokenizer
        self.image_token_index = self.tokenizer.image_token_id
        self.text_model = text_model

    def _merge(self, input_ids, inputs_embeds, image_hidden_states):
        special_image_token_mask = input_ids == self.tokenizer.image_token_id
        new_inputs_embeds = inputs_embeds.clone()
        new_inputs_embeds[special_image_token_mask] = image_hidden_states.reshape(-1, inputs_embeds.size(-1))
        return new_inputs_embeds

    def forward(self, input_ids, image_hidden_states):
        inputs_embeds = self.text_model.get_input_embeddings()(input_ids)
        return self.text_model(inputs_embeds=self._merge(input_ids, inputs_embeds, image_hidden_states))
