"""Per-image pruning with a bool mask read inside comprehensions (the shape of LightGlue's keypoint
pruning and ViLT's patch selection): `t[m]` has as many rows as the mask holds True, a graph
break. Measured under torch 2.15 (CPython 3.11): inside a list comprehension the graph breaks at
its statement and Dynamo resumes after it; inside a generator expression it cannot resume and
skips the whole function (critical). The mask is still a mask after `masked_fill`, `detach()`
and `~`."""
import torch
from torch import nn


class KeypointPruner(nn.Module):
    def forward(self, descriptors: torch.Tensor, scores: torch.Tensor, padding: torch.Tensor):
        keep = (scores > 0.5).detach()
        keep = keep.masked_fill(padding == 0, False)
        kept_descriptors, kept_scores = ([t[m] for t, m in zip(tensor, keep)] for tensor in [descriptors, scores])
        dropped = ~keep
        return kept_descriptors, kept_scores, [row[drop] for row, drop in zip(scores, dropped)]
