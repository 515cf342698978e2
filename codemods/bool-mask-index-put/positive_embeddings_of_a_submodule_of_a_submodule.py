"""The text embeddings come from a submodule of a submodule (`self.decoder.embed(input_ids)`, the
language model's own embedding table), and two levels deep (`self.lm.decoder.embed`). Both are
tensors, so is their clone, and the masked write of the image features into it is reported with
the masked_scatter fix."""
import torch
from torch import nn


class TextDecoder(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, x):
        return self.head(x)


class LanguageModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.decoder = TextDecoder()

    def forward(self, x):
        return self.decoder(x)


class VLM(nn.Module):
    def __init__(self, dim: int = 8, image_token_id: int = 3):
        super().__init__()
        self.image_token_id = image_token_id
        self.projector = nn.Linear(dim, dim)
        self.decoder = TextDecoder()
        self.lm = LanguageModel()

    def forward(self, input_ids, image_features):
        image_embd = self.projector(image_features)
        out = self.decoder.embed(input_ids).clone()
        out[input_ids == self.image_token_id] = image_embd.view(-1, image_embd.size(-1))
        deep = self.lm.decoder.embed(input_ids)
        deep[input_ids == self.image_token_id] = image_embd.view(-1, image_embd.size(-1))
        return self.decoder(out) + self.lm(deep)
