"""Tests that Dynamo evaluates while tracing (guards, no break): shapes, dtypes, devices, flags,
`is None`, `isinstance`, `len`, config values, `exists()`-style helpers, torch predicates."""
import torch
from torch import nn


def exists(value):
    return value is not None


def default(value, fallback):
    return value if exists(value) else fallback


class Config:
    use_cache = True
    scale_attn = 2


class Attention(nn.Module):
    def __init__(self, config: Config, dim: int = 16):
        super().__init__()
        self.config = config
        self.qkv = nn.Linear(dim, dim * 3)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, output_attentions: bool = False):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        if x.dim() == 3 and x.shape[-1] % 2 == 0 and x.ndim > 1:
            q = q * 1.0
        if x.dtype == torch.float16 or x.device.type == "cpu" or x.is_cuda:
            k = k.float()
        if x.requires_grad and self.training:
            v = v * 1.0
        if mask is not None and isinstance(mask, torch.Tensor) and len(mask) > 0:
            k = k.masked_fill(mask, 0.0)
        if exists(mask) and default(mask, None) is not None:
            q = q + 0
        if torch.jit.is_scripting() or torch.is_tensor(x) and torch.is_floating_point(x):
            q = q.contiguous()
        if self.config.use_cache and self.config.scale_attn > 1 and q.size(1) > 1:
            q = q / self.config.scale_attn
        attn = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
        out = attn @ v
        return (out, attn) if output_attentions else out
