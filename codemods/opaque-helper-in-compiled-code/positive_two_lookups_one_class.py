# Two different lookups in one class (`bos_token_id` and `eos_token_id`).
# tcfix: two TCF102 findings; the fix adds two cached attributes, both after the tokenizer
# assignment, and rewrites each site.
import torch
from torch import nn


class PromptWrapper(nn.Module):
    def __init__(self, model, tokenizer):
        super().__init__()
        self.model = model
        self.tokenizer = tokenizer

    def forward(self, input_ids):
        batch = input_ids.size(0)
        bos = input_ids.new_full((batch, 1), self.tokenizer.bos_token_id)
        eos = input_ids.new_full((batch, 1), self.tokenizer.eos_token_id)
        return self.model(torch.cat([bos, input_ids, eos], dim=1))
