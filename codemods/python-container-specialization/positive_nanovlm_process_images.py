"""nanoVLM's `_process_images`: images arrive as a list of per-sample tensors."""
import torch
from torch import nn


class VisionLanguageModel(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.vision_encoder = nn.Linear(dim, dim)
        self.decoder = nn.Linear(dim, dim)

    def _process_images(self, images, device):
        if isinstance(images, list):
            if images and isinstance(images[0], list):
                images = [img for sublist in images for img in sublist]
            if not images:
                return None
            images = torch.cat(images, dim=0).to(device)
        return images

    def forward(self, input_ids, images):
        images = self._process_images(images, input_ids.device)
        return self.decoder(self.vision_encoder(images))
