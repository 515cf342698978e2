# Several TCF102 fixes in one file: two classes, attribute lookups, one lookup repeated,
# one inside a `for` loop (critical), a report-only call, and a class that already uses the
# attribute name `image_token_id_` (the new name must not collide).
# tcfix: 5 findings; 4 fixed (one cache per distinct lookup and class, the new name avoids
# `image_token_id_`), the `self.tokenizer(texts)` call reported only.
import torch
from torch import nn


class TextSide(nn.Module):
    def __init__(self, tokenizer, dim: int):
        super().__init__()
        self.tokenizer = tokenizer
        self.image_token_id_ = -1
        self.embed = nn.Embedding(len(tokenizer), dim)

    def forward(self, input_ids, texts=None):
        if texts is not None:
            input_ids = self.tokenizer(texts, return_tensors="pt").input_ids
        x = self.embed(input_ids)
        image_mask = input_ids == self.tokenizer.image_token_id
        pad_mask = input_ids == self.tokenizer.pad_token_id
        return x * (~pad_mask).unsqueeze(-1), image_mask


class Segmenter(nn.Module):
    def __init__(self, processor, dim: int, segments: int):
        super().__init__()
        self.processor = processor
        self.heads = nn.ModuleList([nn.Linear(dim, dim) for _ in range(segments)])

    def forward(self, input_ids, hidden):
        sep = self.processor.tokenizer_sep_id
        outs = []
        for head in self.heads:
            outs.append(head(hidden) * (input_ids != self.processor.tokenizer_sep_id).unsqueeze(-1))
        return torch.stack(outs), sep
