"""Oracle fixture for data-dependent-shape (TCF106): the `capture_dynamic_output_shape_ops` setting.

A masked-LM head that decodes only the masked tokens (`hidden[mask]`, `labels[mask]`: the same mask,
so Dynamo knows the two sizes are equal), an expert dispatch over a fixed `range` of experts with
one-argument `torch.where`, and a segment count from `torch.unique`. Each is a graph break (GB0036) —
the `torch.where` inside the expert loop makes Dynamo run the whole forward eagerly. None feeds a
sum or a mean only, so the dense rewrite does not apply; with --unsafe-fixes tcfix writes
`torch._dynamo.config.capture_dynamic_output_shape_ops = True` once, where the project compiles (here
the module-level `torch.compile` at the end, standing for a training script: a module that compiles
nothing gets the setting as advice only): Dynamo then gives the selections unbacked sizes and the
forward is one graph, in inference and in training, with outputs and gradients equal to the
original's eager ones. (The oracle keeps the setting to the fixed module's runs.)
"""
import torch
import torch.nn.functional as F
from torch import nn


class MaskedExpertHead(nn.Module):
    def __init__(self, dim: int = 16, vocab: int = 20, num_experts: int = 4):
        super().__init__()
        self.num_experts = num_experts
        self.router = nn.Linear(dim, num_experts)
        self.experts = nn.Parameter(torch.randn(num_experts, dim, dim) / dim**0.5)
        self.decoder = nn.Linear(dim, vocab)

    def forward(self, hidden: torch.Tensor, labels: torch.Tensor, segment_ids: torch.Tensor) -> torch.Tensor:
        weights, chosen = self.router(hidden).softmax(-1).topk(2, dim=-1)
        expert_mask = F.one_hot(chosen, self.num_experts).permute(2, 1, 0)
        mixed = torch.zeros_like(hidden)
        for expert in range(self.num_experts):
            top_k_pos, token_idx = torch.where(expert_mask[expert])
            routed = hidden[token_idx] @ self.experts[expert] * weights[token_idx, top_k_pos, None]
            mixed = mixed.index_add(0, token_idx, routed)
        masked = labels != -100
        logits = self.decoder(mixed[masked])
        loss = F.cross_entropy(logits, labels[masked])
        segments = torch.unique(segment_ids)
        return loss + segments.numel() * 0.01


# The project's own compile (a training script's): where the one setting goes.
compiled_head = torch.compile(MaskedExpertHead())


def oracle_cases():
    labels = [torch.tensor([3, -100, 7, -100, 1, 0]), torch.tensor([-100, 2, 2, 5, -100, -100])]
    segments = [torch.tensor([0, 0, 1, 2, 2, 2]), torch.tensor([4, 4, 4, 1, 1, 0])]
    steps = [(torch.randn(6, 16), label, segment) for label, segment in zip(labels, segments)]
    return [
        {
            "name": "inference",
            "factory": lambda: MaskedExpertHead().eval(),
            "inputs": steps,
            "unsafe_fixes": True,
            "expect": {"graphs": (None, 1), "eager_frames": (">=1", 0), "graph_breaks": (None, 0)},
        },
        {
            "name": "training",
            "factory": MaskedExpertHead,
            "inputs": steps,
            "train": True,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"graphs": (None, 1), "eager_frames": (">=1", 0), "graph_breaks": (None, 0)},
        },
    ]
