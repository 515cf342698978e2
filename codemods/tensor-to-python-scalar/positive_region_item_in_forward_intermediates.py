# A backbone's feature-extraction entry point, which detection heads call (and users compile) in
# place of `forward`: it reads the patch grid back from the position ids with `.item()`, a graph
# break, though `forward` itself never calls it.
# tcfix: TCF103 on both `.item()` calls in `forward_intermediates`.
import torch
from torch import nn


class PatchBackbone(nn.Module):
    def __init__(self, dim: int, depth: int):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))
        self.head = nn.Linear(dim, 10)

    def forward_intermediates(self, x: torch.Tensor, grid_ids: torch.Tensor) -> list:
        features = []
        for block in self.blocks:
            x = block(x)
            features.append(x)
        rows = int(grid_ids[..., 0].max().item()) + 1
        cols = int(grid_ids[..., 1].max().item()) + 1
        return [f.reshape(f.shape[0], rows, cols, -1).permute(0, 3, 1, 2) for f in features]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.head(x.mean(dim=1))
