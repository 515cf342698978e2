"""A loop over the batch after a bool-mask read inside a generator expression (LightGlue's
pruning): Dynamo cannot resume after a break there and skips the whole function (measured under
torch 2.15: "Failed to handle graph break gracefully. Skipping the function"), so the loop runs
eagerly and is never unrolled. The selection is the finding (TCF106, critical); the loop is not.
(With a list comprehension instead, Dynamo resumes after it and the loop is unrolled: that one
is reported.)"""
import torch
from torch import nn


class Pruner(nn.Module):
    def forward(self, descriptors: torch.Tensor, scores: torch.Tensor, counts: torch.Tensor):
        batch_size = descriptors.shape[0]
        keep = scores > 0.5
        pruned, kept_scores = ([t[m] for t, m in zip(tensor, keep)] for tensor in [descriptors, scores])
        for i in range(batch_size):
            counts[i] += pruned[i].shape[0]
        return pruned, counts
