# The tokenizer is changed right after it is stored (`self.tokenizer.add_tokens([...])`): the id of
# the new token exists only after that line.
# tcfix: TCF102 (high); the cache line goes AFTER `self.tokenizer.add_tokens(...)`, not right
# after `self.tokenizer = tokenizer`.
import torch
from torch import nn


class GroundingModel(nn.Module):
    def __init__(self, tokenizer, backbone, dim: int):
        super().__init__()
        self.backbone = backbone
        self.tokenizer = tokenizer
        self.tokenizer.add_tokens(["<box>", "</box>"], special_tokens=True)
        self.box_head = nn.Linear(dim, 4)

    def forward(self, input_ids, hidden):
        box_positions = input_ids == self.tokenizer.convert_tokens_to_ids("<box>")
        return self.box_head(hidden[box_positions])
