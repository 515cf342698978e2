# forward WRITES an attribute of the tokenizer (`self.tokenizer.padding_side = "left"`) before a
# (report-only) tokenizer call. A write is not a lookup: rewriting the target to
# `self.padding_side_ = "left"` would silently change what the code does.
# tcfix: TCF102 on the call (report only); no fix may rewrite the assignment target.
import torch
from torch import nn


class Reranker(nn.Module):
    def __init__(self, tokenizer, encoder):
        super().__init__()
        self.tokenizer = tokenizer
        self.encoder = encoder

    def forward(self, queries, passages):
        self.tokenizer.padding_side = "left"
        batch = self.tokenizer(queries, passages, padding=True, truncation=True, return_tensors="pt")
        return self.encoder(**batch).logits.squeeze(-1)
