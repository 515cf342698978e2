"""TCF108 edge: a comment inside the call would be lost by the rewrite: report without a fix."""
import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    def forward(self, q, k, v):
        with torch.backends.cuda.sdp_kernel(
            enable_flash=False,  # flash gives NaNs with this mask
            enable_mem_efficient=False,
        ):
            return F.scaled_dot_product_attention(q, k, v)
