# `.item()` inside the message of an error raised when two counts disagree: it runs only on the
# way to the error. The `if` test itself is compiled (a data-dependent branch, another rule's
# finding), the message is not (real shape: a placeholder-token count check in a multimodal
# model that formats the counts into its ValueError).
# tcfix: no TCF103 finding.
import torch
from torch import nn


class ImageMerger(nn.Module):
    def __init__(self, image_token: int):
        super().__init__()
        self.image_token = image_token

    def forward(self, ids: torch.Tensor, embeds: torch.Tensor, image_embeds: torch.Tensor):
        mask = ids == self.image_token
        placeholders = mask.sum()
        if placeholders != image_embeds.shape[0]:
            raise ValueError(f"{placeholders.item()} placeholders for {image_embeds.shape[0]} images")
        return embeds.masked_scatter(mask.unsqueeze(-1), image_embeds)
