"""Trimmed from transformers 5.23: per-layer tuples (MoE `load_balancing_loss_func`) and a neck
that validates its list of per-level hidden states. Their length is fixed by the model."""
import torch
from torch import nn


def load_balancing_loss_func(gate_logits, num_experts=None, top_k=2):
    if gate_logits is None or not isinstance(gate_logits, tuple):
        return 0
    concatenated = torch.cat([layer_gate for layer_gate in gate_logits], dim=0)
    return concatenated.softmax(-1).mean()


class Neck(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.sizes = sizes
        self.convs = nn.ModuleList([nn.Conv2d(s, 8, 1) for s in sizes])

    def forward(self, hidden_states, router_logits):
        if not isinstance(hidden_states, (tuple, list)):
            raise TypeError("hidden_states should be a tuple or list of tensors")
        if len(hidden_states) != len(self.sizes):
            raise ValueError("The number of hidden states should be equal to the number of neck hidden sizes.")
        out = [conv(h) for conv, h in zip(self.convs, hidden_states)]
        return out, load_balancing_loss_func(router_logits)
