# `self.tokenizer.convert_tokens_to_ids("<image>")`: a method call with constant arguments, so its
# result cannot depend on the inputs and can be computed once.
# tcfix: TCF102 (high); fix caches it in __init__ under a name derived from the call
# (`convert_tokens_to_ids_image_`) and reads that in forward.
import torch
from torch import nn


class Llava(nn.Module):
    def __init__(self, language_model, vision_tower, projector, tokenizer):
        super().__init__()
        self.language_model = language_model
        self.vision_tower = vision_tower
        self.projector = projector
        self.tokenizer = tokenizer

    def forward(self, input_ids, pixel_values):
        image_features = self.projector(self.vision_tower(pixel_values))
        inputs_embeds = self.language_model.get_input_embeddings()(input_ids)
        special_image_mask = input_ids == self.tokenizer.convert_tokens_to_ids("<image>")
        special_image_mask = special_image_mask.unsqueeze(-1).expand_as(inputs_embeds)
        inputs_embeds = inputs_embeds.masked_scatter(special_image_mask, image_features)
        return self.language_model(inputs_embeds=inputs_embeds)
