# torch's checks of a boolean tensor, `torch._check_tensor_all(cond)` and
# `torch._check_tensor_all_with(error, cond, message)`: Dynamo reads the condition back as a Python
# bool through `.item()`, so each one breaks the graph with the default config, whatever its
# message (torch 2.15: GB0124). With `capture_scalar_outputs` they trace, unless the message is a
# lambda that reads a tensor (GB9158): that one keeps breaking.
# tcfix: three TCF103 findings; the first two removed by the setting, the third not.
import torch
from torch import nn


def check_counts(cond, message):
    # A helper that hands a tensor condition on, as libraries do.
    torch._check_tensor_all(cond)


class PatchMerger(nn.Module):
    def __init__(self, marker: int = 3):
        super().__init__()
        self.marker = marker
        self.proj = nn.Linear(8, 8)

    def forward(self, ids: torch.Tensor, embeds: torch.Tensor, patches: torch.Tensor) -> torch.Tensor:
        slots = ids == self.marker
        taken = slots.sum()
        check_counts(taken == patches.shape[0], "one slot per patch")
        torch._check_tensor_all_with(ValueError, taken > 0, lambda: "no slot for the patches")
        torch._check_tensor_all_with(ValueError, taken < 64, lambda: f"{taken} slots is too many")
        return embeds.masked_scatter(slots.unsqueeze(-1), self.proj(patches))
