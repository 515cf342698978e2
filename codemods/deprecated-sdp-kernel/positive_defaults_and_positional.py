"""TCF108 positive: positional flags (`enable_flash, enable_math, enable_mem_efficient,
enable_cudnn` in that order) and a call with no arguments (every backend enabled)."""
import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    def forward(self, q, k, v, causal: bool = False):
        if causal:
            with torch.backends.cuda.sdp_kernel(True, False, True):
                return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        with torch.backends.cuda.sdp_kernel():
            return F.scaled_dot_product_attention(q, k, v)
