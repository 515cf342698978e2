import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden_states):
        hidden_states = self.dense(hidden_states)
        self.classifier = nn.Linear(self.config.hidden_size, self.config.num_labels)
        return self.classifier(hidden_states)
