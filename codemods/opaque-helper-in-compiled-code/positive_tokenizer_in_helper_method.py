# nanoVLM style: the tokenizer lookup sits in a helper that forward calls, not in forward itself.
# tcfix: TCF102 (high) in `VisionLanguageModel._replace_img_tokens_with_embd` (called from forward);
# fix caches the id in __init__ and rewrites the helper.
import torch
from torch import nn


class VisionLanguageModel(nn.Module):
    def __init__(self, cfg, vision_encoder, decoder, projector, tokenizer):
        super().__init__()
        self.cfg = cfg
        self.vision_encoder = vision_encoder
        self.decoder = decoder
        self.MP = projector
        self.tokenizer = tokenizer

    def _replace_img_tokens_with_embd(self, input_ids, token_embd, image_embd):
        updated_token_embd = token_embd.clone()
        mask = input_ids == self.tokenizer.image_token_id
        updated_token_embd[mask] = image_embd.view(-1, image_embd.size(-1)).to(updated_token_embd.dtype)
        return updated_token_embd

    def forward(self, input_ids, images, attention_mask=None, targets=None):
        image_embd = self.MP(self.vision_encoder(images))
        token_embd = self.decoder.token_embedding(input_ids)
        updated_token_embd = self._replace_img_tokens_with_embd(input_ids, token_embd, image_embd)
        logits, _ = self.decoder(updated_token_embd, attention_mask=attention_mask)
        return logits
