"""The tokenizer lookup sits in a helper; forward, which calls it, writes the image features
through a boolean mask. The lookup's graph break keeps that write in a graph apart from the rest
of forward; without the break the two are traced together, and in training AOTAutograd gives the
whole frame up to eager (the masked write's backward needs nonzero). So the hoist is Unsafe here,
and its title names the write and its line (TCF105's masked_scatter fix goes with it)."""
import torch
from torch import nn


class Llava(nn.Module):
    def __init__(self, tokenizer, dim: int = 8):
        super().__init__()
        self.tokenizer = tokenizer
        self.embed = nn.Embedding(32, dim)
        self.projector = nn.Linear(dim, dim)

    def _image_positions(self, input_ids):
        return input_ids == self.tokenizer.image_token_id

    def forward(self, input_ids, image_features):
        image_embd = self.projector(image_features)
        out = self.embed(input_ids)
        out[self._image_positions(input_ids)] = image_embd.view(-1, image_embd.size(-1))
        return out
