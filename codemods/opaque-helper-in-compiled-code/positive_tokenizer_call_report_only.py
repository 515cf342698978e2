# `self.tokenizer(text)` in forward: the result depends on the input text, so it cannot be cached.
# tcfix: TCF102 (high) reported WITHOUT a fix (tokenize outside the compiled region).
import torch
from torch import nn


class TextEncoder(nn.Module):
    def __init__(self, tokenizer, encoder):
        super().__init__()
        self.tokenizer = tokenizer
        self.encoder = encoder

    def forward(self, texts):
        batch = self.tokenizer(texts, padding=True, return_tensors="pt")
        return self.encoder(batch["input_ids"], attention_mask=batch["attention_mask"]).last_hidden_state
