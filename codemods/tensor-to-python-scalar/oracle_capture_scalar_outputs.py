"""Oracle fixture for tensor-to-python-scalar (TCF103): the `capture_scalar_outputs` setting.

A vision merger shaped like the Qwen-VL ones: per-image token counts read from `grid_thw` with
`.tolist()` become split sizes, a `for` over `grid_thw.tolist()` reshapes each image's tokens, and
`.item()` values bound a slice and size an `arange`. Each conversion is a graph break (GB0033 for
`.tolist()`, GB0124 for `.item()`); none feeds tensor arithmetic only, so the `.detach()` fix does not
apply. With --unsafe-fixes tcfix writes `torch._dynamo.config.capture_scalar_outputs = True` once,
for all of them, where the project compiles (the module-level `torch.compile` at the end, standing for
a training script), with a comment saying why: Dynamo then traces the values as unbacked symbols and
the forward is one graph, in inference and in training, with outputs and gradients equal to the
original's eager ones. (The oracle keeps the setting to the fixed module's runs.)
"""
import torch
from torch import nn


class PatchMerger(nn.Module):
    def __init__(self, dim: int = 16, merge: int = 2):
        super().__init__()
        self.merge = merge
        self.proj = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, tokens: torch.Tensor, grid_thw: torch.Tensor, text_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.proj(tokens)
        split_sizes = (grid_thw.prod(-1) // self.merge**2).tolist()
        per_image = torch.split(hidden, split_sizes)
        pooled = torch.stack([chunk.mean(0) for chunk in per_image])
        start = 0
        rows = []
        for t, h, w in grid_thw.tolist():
            count = t * h * w // self.merge**2
            rows.append(hidden[start : start + count].reshape(t, h // self.merge, w // self.merge, -1).amax((1, 2)))
            start += count
        framed = torch.cat(rows)
        kept = int(text_mask.sum().item())
        text = self.norm(hidden[:kept])
        max_len = text_mask.sum(-1).max().item()
        positions = torch.arange(max_len, device=tokens.device, dtype=tokens.dtype)
        return pooled.sum(0) + framed.sum(0) + text.mean(0) + positions.mean()


# The project's own compile (a training script's): where the one setting goes.
compiled_merger = torch.compile(PatchMerger())


def oracle_cases():
    grids = [torch.tensor([[1, 4, 4], [1, 2, 4]]), torch.tensor([[1, 2, 4], [1, 4, 4]])]
    masks = [torch.tensor([1, 1, 1, 0, 0, 0]), torch.tensor([1, 1, 1, 1, 1, 0])]
    steps = [(torch.randn(6, 16), grid, mask) for grid, mask in zip(grids, masks)]
    expect = {"graph_breaks": (">=3", 0), "graphs": (">1", 1), "eager_frames": (0, 0)}
    return [
        {
            "name": "inference",
            "factory": lambda: PatchMerger().eval(),
            "inputs": steps,
            "unsafe_fixes": True,
            "expect": expect,
        },
        {
            "name": "training",
            "factory": PatchMerger,
            "inputs": steps,
            "train": True,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": expect,
        },
    ]
