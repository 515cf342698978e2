import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, images: torch.Tensor):
        return self.fc(images)


def collate(images):
    if isinstance(images, list):
        images = torch.stack(images)
    return images
