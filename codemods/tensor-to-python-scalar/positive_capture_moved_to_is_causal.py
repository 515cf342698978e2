"""A number read from a tensor that ends in sdpa's `is_causal`: the capture option would move the
break, not remove it.

`q_len = attention_mask.sum(-1).max().item()` then `is_causal = q_len > 1` (the shape of the sdpa
integrations' check, fed from tensor data). With `capture_scalar_outputs` on, Dynamo traces the
`.item()` as an unbacked symbol and the comparison as a SymBool, then breaks at the sdpa call:
"scaled_dot_product_attention(): argument 'is_causal' must be bool, not SymBool" (GB0112; measured
under torch 2.15, CPU, inline and through a name alike). So the finding gets no option fix, and says
where Dynamo still breaks. The `.item()` that only bounds a slice in `Trimmer` is still removed by the
option (advice: this module compiles nothing).
"""
import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim: int = 16):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)

    def forward(self, x: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).unsqueeze(1).chunk(3, dim=-1)
        q_len = attention_mask.sum(-1).max().item()
        is_causal = q_len > 1
        return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)


class Trimmer(nn.Module):
    def forward(self, x: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        kept = int(attention_mask.sum().item())
        return x[:, :kept]
