# Prints and logging in load-time code: a `from_pretrained` classmethod and the `_load_weights`
# helper it calls. Neither is reached from forward.
# tcfix: no TCF101 finding.
import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


class TinyLM(nn.Module):
    def __init__(self, vocab: int = 256, dim: int = 64):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def _load_weights(self, path):
        state = torch.load(path, map_location="cpu")
        missing, unexpected = self.load_state_dict(state, strict=False)
        print(f"missing keys: {missing}")
        logger.warning("unexpected keys: %s", unexpected)

    @classmethod
    def from_pretrained(cls, path, **kwargs):
        model = cls(**kwargs)
        print(f"loading {path}")
        model._load_weights(path)
        return model

    def forward(self, ids):
        return self.head(self.embed(ids))
