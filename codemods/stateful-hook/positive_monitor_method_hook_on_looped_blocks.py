"""stateful-hook (TCF202), bound-method form, on blocks called in a loop: no fix (issue #27).

A small transformer language model watched by an `ActivationMonitor` that registers its own method
`_record` as a forward hook on every block. The method reads `self.enabled`, which the training loop
toggles; Dynamo traces the hook with the forward and guards on the monitor's flag, so each toggle
recompiles. The hook sits on blocks that forward calls in a loop, where `@torch.compiler.disable` (the
fix tcfix once wrote, with --unsafe-fixes) makes Dynamo skip the whole forward; tcfix now offers no
fix here and says what keeps forward in one graph (the flag tests taken out of the hook).
"""
import torch
import torch.nn.functional as F
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class DecoderBlock(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab_size: int = 128, block_size: int = 32, dim: int = 48, heads: int = 4, layers: int = 3):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, dim)
        self.pos_emb = nn.Embedding(block_size, dim)
        self.blocks = nn.ModuleList([DecoderBlock(dim, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)

    def forward(self, idx):
        positions = torch.arange(idx.size(1), device=idx.device)
        x = self.tok_emb(idx) + self.pos_emb(positions)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


class ActivationMonitor:
    """Records the RMS of every block's output while enabled (e.g. on logging steps only)."""

    def __init__(self, model: TinyGPT):
        self.enabled = False
        self.rms: dict[str, list[float]] = {}
        self.handles = [
            block.register_forward_hook(self._record) for block in model.blocks
        ]
        self.names = {id(block): f"blocks.{i}" for i, block in enumerate(model.blocks)}

    def _record(self, module, inputs, output):
        if self.enabled:
            rms = output.detach().pow(2).mean().sqrt().item()
            self.rms.setdefault(self.names[id(module)], []).append(rms)


def _monitored_model():
    model = TinyGPT()
    model.monitor = ActivationMonitor(model)
    return model


def _step(idx, enabled: bool):
    def step(model):
        model.monitor.enabled = enabled
        return (idx,)

    return step
