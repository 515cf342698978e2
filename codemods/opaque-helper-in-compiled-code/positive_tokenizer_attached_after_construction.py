# `tokenizer=None` by default: `from_pretrained` builds the model without one and attaches it
# afterwards from outside (`model.tokenizer = ...`). A cache computed in __init__ would evaluate
# `None.image_token_id` and raise AttributeError while loading.
# tcfix: TCF102 (high); the fix must not be Safe here (the tokenizer may be None in __init__ and
# is set outside the class).
import torch
from torch import nn
from transformers import AutoTokenizer


class VisionLanguageModel(nn.Module):
    def __init__(self, vision_encoder, decoder, tokenizer=None):
        super().__init__()
        self.vision_encoder = vision_encoder
        self.decoder = decoder
        self.tokenizer = tokenizer

    @classmethod
    def from_pretrained(cls, path, vision_encoder, decoder):
        model = cls(vision_encoder, decoder)
        model.load_state_dict(torch.load(f"{path}/model.pt", map_location="cpu"))
        model.tokenizer = AutoTokenizer.from_pretrained(path)
        return model

    def forward(self, input_ids, images):
        image_embeds = self.vision_encoder(images)
        embeds = self.decoder.embed_tokens(input_ids)
        mask = (input_ids == self.tokenizer.image_token_id).unsqueeze(-1)
        return self.decoder(inputs_embeds=embeds.masked_scatter(mask, image_embeds))
