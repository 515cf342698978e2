"""Lists of a range over counts the model fixes: built once, never recompiled."""
import torch
from torch import nn


class Heads(nn.Module):
    def __init__(self, num_layers: int = 2):
        super().__init__()
        self.num_layers = num_layers
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(num_layers)])

    def forward(self, x):
        num_heads = x.shape[1]
        layers = list(range(self.num_layers))
        order = torch.tensor(list(range(len(self.blocks))))
        heads = tuple(range(num_heads))
        ranks = list(range(len(x.shape)))
        return x * (len(layers) + order.sum() + len(heads) + len(ranks))


def permute_final_dims(tensor: torch.Tensor, inds: list[int]):
    # The number of leading dimensions: a rank, not a size (ESMFold).
    zero_index = -1 * len(inds)
    first_inds = list(range(len(tensor.shape[:zero_index])))
    return tensor.permute(first_inds + [zero_index + i for i in inds])


class Pairs(nn.Module):
    def forward(self, pair):
        return permute_final_dims(pair, [2, 0, 1])
