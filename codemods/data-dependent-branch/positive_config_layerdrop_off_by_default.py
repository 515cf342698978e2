"""Flags read from a config whose defaults turn them off (the transformers shape: a config class
with field defaults, modules storing `self.layerdrop = config.decoder_layerdrop`, an adapter built
only when `config.use_adapter`). The default config never traces these branches, but a
checkpoint's config.json may turn them on: each finding stays, low, and says when it is real.
The encoder's layerdrop defaults to 0.1, and the file itself sets `cross_layerdrop`: those two
findings stay critical."""
import numpy as np
import torch
from torch import nn


class TinyConfig:
    hidden: int = 16
    encoder_layerdrop: float = 0.1
    decoder_layerdrop: float = 0.0
    cross_layerdrop: float = 0.0
    use_adapter: bool = False

    def __init__(self, keep_only_in_window=True, **kwargs):
        self.keep_only_in_window = keep_only_in_window


class Adapter(nn.Module):
    def __init__(self, config: TinyConfig):
        super().__init__()
        self.proj = nn.Linear(config.hidden, config.hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(2):
            if np.random.random() > 0.5:
                x = self.proj(x)
        return x


class Encoder(nn.Module):
    def __init__(self, config: TinyConfig):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(config.hidden, config.hidden) for _ in range(2)])
        self.layerdrop = config.encoder_layerdrop

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            if self.training and self.layerdrop > 0.0:
                if torch.rand([]) < self.layerdrop:
                    continue
            hidden_states = layer(hidden_states)
        return hidden_states


class Decoder(nn.Module):
    def __init__(self, config: TinyConfig):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(config.hidden, config.hidden) for _ in range(2)])
        self.layerdrop = config.decoder_layerdrop
        self.keep_only_in_window = config.keep_only_in_window
        self.adapter = Adapter(config) if config.use_adapter else None

    def forward(self, hidden_states: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            if self.training and self.layerdrop > 0.0:
                if torch.rand([]) < self.layerdrop:
                    continue
            hidden_states = layer(hidden_states)
        if not self.keep_only_in_window and scores.max() > 0:
            hidden_states = hidden_states * 2
        if hidden_states.shape[0] > 1 and not self.keep_only_in_window:
            print("outside the window")
        if self.adapter is not None:
            hidden_states = self.adapter(hidden_states)
        return hidden_states


def with_cross_layerdrop(config: TinyConfig) -> TinyConfig:
    config.cross_layerdrop = 0.2
    return config


class CrossDecoder(nn.Module):
    def __init__(self, config: TinyConfig):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(config.hidden, config.hidden) for _ in range(2)])
        self.layerdrop = config.cross_layerdrop

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            if self.training and self.layerdrop > 0.0:
                if torch.rand([]) < self.layerdrop:
                    continue
            hidden_states = layer(hidden_states)
        return hidden_states
