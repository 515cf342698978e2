"""A branch on a keyword flag that reaches an attention function only through `**kwargs`: the
warning runs only for a caller who passes `return_weights=True` down the chain, so a plain call
never traces it. The finding stays, low, and says which call makes it real. Where the function
fills the keyword itself (`kwargs.setdefault`), or the default of `.get` is on, the condition is
not the caller's: the finding stays as it is."""
import logging

import torch
import torch.nn.functional as F
from torch import nn

logger = logging.getLogger(__name__)


def attend(query, key, value, **kwargs):
    if kwargs.get("return_weights", False):
        logger.warning("this attention cannot return its weights; they are left out")
    return F.scaled_dot_product_attention(query, key, value)


def attend_verbose(query, key, value, **kwargs):
    kwargs.setdefault("report", True)
    if kwargs.get("report"):
        print("attending over", key.shape[-2], "keys")
    return F.scaled_dot_product_attention(query, key, value)


class SelfAttention(nn.Module):
    def __init__(self, dim: int = 32, heads: int = 4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)

    def forward(self, x, **kwargs):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        out = attend(q, k, v, **kwargs) + attend_verbose(q, k, v, **kwargs)
        return out.transpose(1, 2).reshape(b, n, d)


model = torch.compile(SelfAttention())
