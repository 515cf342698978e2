"""TCF108 edge: two calls in one file, one in a loop over heads (critical), and `import torch as th`."""
import torch as th
import torch.nn.functional as F
from torch import nn


class MultiScaleAttention(nn.Module):
    def __init__(self, scales: int = 2):
        super().__init__()
        self.scales = scales

    def forward(self, q, k, v):
        outs = []
        for s in range(self.scales):
            with th.backends.cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False, enable_cudnn=False):
                outs.append(F.scaled_dot_product_attention(q[..., s:, :], k[..., s:, :], v[..., s:, :]))
        with th.backends.cuda.sdp_kernel(enable_math=False):
            fused = F.scaled_dot_product_attention(q, k, v)
        return fused, outs
