"""Unannotated forward inputs that are not tensors, and the code says so: sizes handed down next to
the tensor (`H`, `W`, `height`), flags (`use_cache`, `output_attentions`), a layer kind compared
with a string, an option with a default, a list of feature maps walked in a loop, an output object
read by attribute, a dict read by key, a slice bound. Tests on them are plain Python: no graph break.
tcfix: nothing."""
from torch import nn


class Stage(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, H, W, height, use_cache, output_attentions, layer_type, scale=1.0):
        if H * W > 64 and height > 1:
            x = x[:, :64]
        if use_cache or output_attentions:
            x = x + 0
        if layer_type == "sliding":
            x = x * 0.5
        if scale > 1:
            x = x * scale
        return self.proj(x)


class Neck(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, features, encoder_outputs, batch):
        merged = None
        for feature in features:
            merged = feature if merged is None else merged + feature
        if encoder_outputs.last_hidden_state is not None:
            merged = merged + 1
        if batch["pixel_values"] is not None:
            merged = merged * 2
        if features:
            merged = self.proj(merged)
        return merged


class Window(nn.Module):
    """`start` bounds a slice: it is a Python int, so the test on it is too."""

    def forward(self, x, start):
        if start > 0:
            x = x[:, start : start + 4]
        return x
