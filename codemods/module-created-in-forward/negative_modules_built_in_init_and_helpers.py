import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.pad = nn.ZeroPad2d(1)
        self.head = self._make_head(dim)

    def _make_head(self, dim):
        self.proj = nn.Linear(dim, dim)
        return nn.Sequential(self.proj, nn.ReLU())

    def reset_classifier(self, num_classes):
        self.head = nn.Linear(self.proj.in_features, num_classes)

    def forward(self, x):
        return self.head(self.pad(x))
