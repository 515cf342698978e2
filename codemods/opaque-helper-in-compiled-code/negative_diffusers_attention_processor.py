# diffusers-style attention: `self.processor` is an attention-processor object (plain Python
# class with `__call__`, no tokenizer, no Rust): Dynamo inlines it like any Python function.
# tcfix: no TCF102 finding.
import torch
import torch.nn.functional as F
from torch import nn


class AttnProcessor2_0:
    def __call__(self, attn, hidden_states, encoder_hidden_states=None):
        context = hidden_states if encoder_hidden_states is None else encoder_hidden_states
        b, n, _ = hidden_states.shape
        q = attn.to_q(hidden_states).view(b, n, attn.heads, -1).transpose(1, 2)
        k = attn.to_k(context).view(b, context.size(1), attn.heads, -1).transpose(1, 2)
        v = attn.to_v(context).view(b, context.size(1), attn.heads, -1).transpose(1, 2)
        out = F.scaled_dot_product_attention(q, k, v)
        return attn.to_out(out.transpose(1, 2).reshape(b, n, -1))


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int = 8, processor=None):
        super().__init__()
        self.heads = heads
        self.to_q = nn.Linear(dim, dim, bias=False)
        self.to_k = nn.Linear(dim, dim, bias=False)
        self.to_v = nn.Linear(dim, dim, bias=False)
        self.to_out = nn.Linear(dim, dim)
        self.processor = processor if processor is not None else AttnProcessor2_0()

    def set_processor(self, processor):
        self.processor = processor

    def forward(self, hidden_states, encoder_hidden_states=None):
        return self.processor(self, hidden_states, encoder_hidden_states=encoder_hidden_states)
