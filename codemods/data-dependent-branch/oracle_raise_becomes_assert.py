"""Oracle fixture for data-dependent-branch (TCF104): checks that raise become `torch._assert_async`.

A frame-classification head shaped like transformers' wav2vec2 / hubert `ForCTC` heads: it refuses labels past the
vocabulary (`if labels is not None and labels.max() >= self.config.vocab_size: raise ValueError(...)`,
an f-string of a config number) and non-finite features (`if not torch.isfinite(h).all(): raise
ValueError("...")`). Each `if` on tensor data splits the forward (3 graphs). With --unsafe-fixes tcfix
keeps `if labels is not None:` and writes `torch._assert_async(torch.logical_not(...), message)` for
the tensor test: one graph, no break, outputs and gradients equal to the original's eager ones.

The harness runs inputs that pass the checks. The failing side, measured under torch 2.15 on CPU with
the same functions: the original raises ValueError with the message; the fixed one raises
RuntimeError with the same message both eagerly and compiled (one graph, no break), which is what
the fix title says (on CUDA the assert is asynchronous instead).
"""
import torch
import torch.nn.functional as F
from torch import nn


class Config:
    vocab_size = 12
    hidden_size = 16


class FrameHead(nn.Module):
    def __init__(self, config: Config = Config()):
        super().__init__()
        self.config = config
        self.proj = nn.Linear(config.hidden_size, config.hidden_size)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size)

    def forward(self, hidden_states: torch.Tensor, labels: torch.Tensor | None = None):
        if labels is not None and labels.max() >= self.config.vocab_size:
            raise ValueError(f"Label values must be <= vocab_size: {self.config.vocab_size}")
        h = torch.tanh(self.proj(hidden_states))
        if not torch.isfinite(h).all():
            raise ValueError("non-finite hidden states")
        logits = self.lm_head(h)
        if labels is None:
            return logits
        # Per-frame cross entropy stands in for CTC, whose loss Dynamo does not trace (its output
        # shape depends on the lengths).
        return F.cross_entropy(logits.flatten(0, 1), labels.flatten())


def oracle_cases():
    batches = [(torch.randn(2, 10, 16), torch.randint(0, 12, (2, 10))) for _ in range(3)]
    return [
        {
            "name": "inference",
            "factory": lambda: FrameHead().eval(),
            "inputs": batches,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (None, 0), "graphs": (3, 1), "eager_frames": (None, 0)},
        },
        {
            "name": "training",
            "factory": FrameHead,
            "inputs": batches,
            "train": True,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (None, 0), "graphs": (3, 1), "eager_frames": (None, 0)},
        },
    ]
