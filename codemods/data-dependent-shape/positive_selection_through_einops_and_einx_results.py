"""A loss over rearranged predictions, keeping the positions an einx comparison marks: einops and
einx give back a tensor of their operands' kind, and einx's comparisons a boolean one, so
`loss[keep]` selects with a mask (measured with torch 2.15, einops 0.8.2, einx 0.4.3: Dynamo's
"Dynamic shape operator" break at the selection, and a data-dependent branch on the reduced value).
tcfix: TCF106 on `loss[keep]`, TCF104 on `if peak.max() > 0`, TCF210 on both einx calls."""
import einx
import torch
from einops import rearrange, reduce
from torch import nn
from torch.nn import functional as F


class MaskedTokenLoss(nn.Module):
    def forward(self, logits, targets, lengths):
        loss = F.cross_entropy(rearrange(logits, "b n c -> b c n"), targets, reduction="none")
        loss = einx.multiply("b n, b", loss, lengths.float().reciprocal())
        keep = einx.less("n, b -> b n", torch.arange(targets.shape[1]), lengths)
        peak = reduce(logits, "b n c -> b", "max")
        if peak.max() > 0:
            loss = loss * 2
        return loss[keep].mean()
