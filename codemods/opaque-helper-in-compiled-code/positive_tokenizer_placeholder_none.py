# A common lazy pattern: `self.tokenizer = None` in __init__, the real tokenizer is attached later
# by `load_tokenizer`. Caching `self.tokenizer.pad_token_id` in __init__ would raise
# AttributeError ('NoneType' object has no attribute 'pad_token_id') when the model is built.
# tcfix: TCF102 (high) reported WITHOUT a fix (not even an unsafe one).
import torch
from torch import nn
from transformers import AutoTokenizer


class RewardModel(nn.Module):
    def __init__(self, backbone, dim: int):
        super().__init__()
        self.backbone = backbone
        self.score = nn.Linear(dim, 1)
        self.tokenizer = None

    def load_tokenizer(self, name: str):
        self.tokenizer = AutoTokenizer.from_pretrained(name)

    def forward(self, input_ids):
        hidden = self.backbone(input_ids).last_hidden_state
        last = (input_ids != self.tokenizer.pad_token_id).sum(-1) - 1
        return self.score(hidden[torch.arange(hidden.size(0)), last]).squeeze(-1)
