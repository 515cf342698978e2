# The id is read through a chain: `self.processor.tokenizer.image_token_id` (LLaVA-style models
# keep the processor, whose `.tokenizer` holds the id). The opaque step is the whole chain:
# caching only `self.processor.tokenizer` would leave `self.tokenizer_.image_token_id` in forward,
# still a graph break, and tcfix would no longer see it.
# tcfix: TCF102 (high); the fix caches the whole chain
# (`self.image_token_id_ = self.processor.tokenizer.image_token_id`).
import torch
from torch import nn


class LlavaLike(nn.Module):
    def __init__(self, processor, language_model):
        super().__init__()
        self.processor = processor
        self.language_model = language_model

    def forward(self, input_ids, image_features):
        embeds = self.language_model.get_input_embeddings()(input_ids)
        mask = (input_ids == self.processor.tokenizer.image_token_id).unsqueeze(-1)
        return self.language_model(inputs_embeds=embeds.masked_scatter(mask, image_features))
