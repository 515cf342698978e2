"""An image transform module whose forward asks a static method for a random crop offset, passing
the image and a size kept on `self` (torchvision-style `get_params`). Called on `self`, a static
method binds no `self`: the image goes to `img` and the Python tuple to `target_size`, so the
offset is a Python int and the `if` on it is plain Python.
tcfix: nothing (the image's size is read with `.shape`, never its values)."""
import random

from torch import nn


class RandomCrop(nn.Module):
    def __init__(self, size=(8, 8)):
        super().__init__()
        self.size = size

    @staticmethod
    def get_params(img, target_size):
        spare_rows = img.shape[-2] - target_size[0]
        if spare_rows == 0:
            top = 0
        else:
            top = random.randint(0, spare_rows)
        return top

    def forward(self, img):
        top = self.get_params(img, self.size)
        return img[..., top : top + self.size[0], :]
