"""A detector whose base class holds the text-cache helpers: the head's `forward` calls
`self.embed_prompts(ids, mask)`, defined on the file's base class, which loops over the prompts
and asks a static helper for each one's cache key. The key is the prompt's tokens as a Python
tuple: `.tolist()` on a selection, a graph break inside the loop, so Dynamo runs all of
`cached_prompt_keys` eagerly. The inputs are tensors because `forward` says so: tcfix follows
them through the inherited method and the static helper."""
import torch
from torch import nn


class DetectorBase(nn.Module):
    @staticmethod
    def _prompt_key(tokens, valid, index):
        ids = tokens[index]
        mask = valid[index]
        return tuple(ids[mask != 0].tolist())

    def cached_prompt_keys(self, tokens, valid):
        keys = []
        for index, _ in enumerate(tokens):
            keys.append(self._prompt_key(tokens, valid, index))
        return keys

    def embed_prompts(self, tokens, valid):
        return self.cached_prompt_keys(tokens, valid)


class Detector(DetectorBase):
    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, tokens: torch.LongTensor, valid: torch.LongTensor):
        return self.embed_prompts(tokens, valid)
