"""A Qwen-VL-style position index: the tokens kept by the attention mask are converted with `.tolist()`.
With `capture_dynamic_output_shape_ops` on, torch 2.15 fails to compile that conversion
(GuardOnDataDependentSymNode) instead of breaking: tcfix does not offer the setting in this file,
and says why under the other selection too."""
import torch
from torch import nn


class PositionIndex(nn.Module):
    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        image_tokens = (input_ids == 7).nonzero()
        kept = input_ids[0][attention_mask[0].bool()]
        types = kept.tolist()
        return torch.tensor(types).sum() + image_tokens.shape[0]
