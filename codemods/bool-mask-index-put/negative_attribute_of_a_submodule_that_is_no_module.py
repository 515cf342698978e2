"""`self.a.b(x)` is a submodule's output only when tcfix knows `b` is a module of `a`'s class:
here `self.backbone` comes from a factory (`AutoModel.from_config`), whose `get_input_embeddings`
is a method that returns a module, not a tensor; and `self.decoder.lookup` is a plain method of
the file's class. Neither result is a tensor, so nothing is reported."""
import torch
from torch import nn
from transformers import AutoModel


class TextDecoder(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8):
        super().__init__()
        self.table = {}

    def lookup(self, ids):
        return [self.table.get(i) for i in ids]


class VLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.backbone = AutoModel.from_config(config)
        self.decoder = TextDecoder()

    def forward(self, input_ids, image_features, keep):
        embed = self.backbone.get_input_embeddings()
        rows = self.decoder.lookup(input_ids)
        rows[keep] = image_features
        embed[keep] = image_features
        return rows, embed
