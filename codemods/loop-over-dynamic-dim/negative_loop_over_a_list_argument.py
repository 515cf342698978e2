"""A loop over the length of a list the caller passes: a list annotated as one
(`targets: Optional[List[torch.Tensor]]`), or a lone tensor the function wraps into one
(`logits = [logits]`). Dynamo guards on a list argument's length whether or not a loop reads it:
torch 2.15, lengths 2, 2, 3, 4, 3 compile 3 graphs with the loop and 3 with `torch.stack` over the
list instead. The loop adds no recompile; whether the count changes between calls is the list's
question (TCF205), not a tensor size's."""
from typing import List, Optional, Union

import torch
from torch import nn


class ChunkedLoss(nn.Module):
    def forward(self, logits: Union[torch.Tensor, List[torch.Tensor]], targets: Optional[List[torch.Tensor]] = None):
        if isinstance(logits, torch.Tensor):
            logits = [logits]
        total = 0.0
        for i in range(len(logits)):
            total = total + logits[i].logsumexp(-1).mean()
        if targets is not None:
            for j in range(len(targets)):
                total = total + targets[j].float().mean()
        return total
