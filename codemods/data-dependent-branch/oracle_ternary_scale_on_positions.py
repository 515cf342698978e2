"""Oracle fixture for data-dependent-branch (TCF104): a ternary on a 0-d tensor that picks between two
config numbers (Phimoe's rotary scaling: `mscale = long_mscale if seq_len > original_max else
short_mscale`, with `seq_len = torch.max(position_ids) + 1`). The ternary breaks the graph; with
--unsafe-fixes tcfix writes `torch.where(seq_len > ..., long, short)`: one graph, and `mscale`, a
0-d tensor now, scales the cosines as the number did (outputs and gradients equal). The positions
cross the trained length on the later calls, so both sides run."""
import torch
from torch import nn


class Config:
    original_max_position_embeddings = 8
    rope_parameters = {"long_mscale": 1.25, "short_mscale": 1.0}


class ScaledRotary(nn.Module):
    def __init__(self, config: Config = Config(), dim: int = 16):
        super().__init__()
        self.config = config
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))

    def forward(self, x: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
        x = self.proj(x)
        seq_len = torch.max(position_ids) + 1
        mscale = (
            self.config.rope_parameters["long_mscale"]
            if seq_len > self.config.original_max_position_embeddings
            else self.config.rope_parameters["short_mscale"]
        )
        freqs = position_ids[..., None].float() * self.inv_freq
        emb = torch.cat((freqs, freqs), dim=-1)
        return x * emb.cos() * mscale + x.flip(-1) * emb.sin() * mscale


def oracle_cases():
    batches = [(torch.randn(2, 6, 16), torch.arange(6).expand(2, 6) + offset) for offset in (0, 5, 10)]
    return [
        {
            "name": "inference",
            "factory": lambda: ScaledRotary().eval(),
            "inputs": batches,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (None, 0), "graphs": (None, 1), "eager_frames": (None, 0)},
        },
        {
            "name": "training",
            "factory": ScaledRotary,
            "inputs": batches,
            "train": True,
            "unsafe_fixes": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (None, 0), "graphs": (None, 1), "eager_frames": (None, 0)},
        },
    ]
