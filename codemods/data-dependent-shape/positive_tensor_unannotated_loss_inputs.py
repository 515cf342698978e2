"""A loss module whose forward takes predictions, targets and a padding mask without annotations
(speech-synthesis losses do): `masked_select` on them has as many elements as the mask has True
values, a shape Dynamo cannot know. The inputs of forward are tensors unless the code says
otherwise.
tcfix: TCF106 on both masked_select calls."""
from torch import nn


class DurationLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.L1Loss()

    def forward(self, predicted, target, padding_mask):
        keep = ~padding_mask
        predicted = predicted.masked_select(keep)
        target = target.masked_select(keep)
        return self.l1(predicted, target)
