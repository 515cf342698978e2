# The same lookup (`self.tokenizer.pad_token_id`) in forward and in a helper forward calls.
# tcfix: two TCF102 findings; the fix adds ONE cached attribute (`self.pad_token_id_`) in __init__
# and both sites read it.
import torch
import torch.nn.functional as F
from torch import nn


class Seq2SeqLoss(nn.Module):
    def __init__(self, tokenizer, dim: int):
        super().__init__()
        self.tokenizer = tokenizer
        self.lm_head = nn.Linear(dim, len(tokenizer))

    def _shift_labels(self, labels):
        shifted = labels.new_full(labels.shape, self.tokenizer.pad_token_id)
        shifted[:, :-1] = labels[:, 1:]
        return shifted

    def forward(self, hidden, labels):
        logits = self.lm_head(hidden)
        targets = self._shift_labels(labels)
        return F.cross_entropy(
            logits.flatten(0, 1), targets.flatten(), ignore_index=self.tokenizer.pad_token_id
        )
