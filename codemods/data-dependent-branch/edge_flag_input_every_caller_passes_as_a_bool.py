"""An unannotated positional input of `forward` is presumed a tensor, but the file's own calls say
otherwise: the only place that builds `LabelDropout` keeps it in `self.labels`, and every call of
it passes `self.training` as `train`. `train and use_dropout` tests Python bools (torch 2.15: 1
graph, no break, in train and eval). `Gate` is called once with a tensor there: its test reads
tensor data and stays reported (the model: 1 break)."""
import torch
from torch import nn


class LabelDropout(nn.Module):
    def __init__(self, classes, dim, p):
        super().__init__()
        self.table = nn.Embedding(classes + 1, dim)
        self.classes = classes
        self.p = p

    def forward(self, labels, train):
        use_dropout = self.p > 0
        if train and use_dropout:
            drop = torch.rand(labels.shape[0], device=labels.device) < self.p
            labels = torch.where(drop, self.classes, labels)
        return self.table(labels)


class Gate(nn.Module):
    def forward(self, x, keep):
        if keep:
            return x
        return x * 0


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.labels = LabelDropout(10, 8, 0.1)
        self.gate = Gate()

    def forward(self, y, x):
        h = self.labels(y, self.training)
        return self.gate(h + x, x.mean() > 0)
