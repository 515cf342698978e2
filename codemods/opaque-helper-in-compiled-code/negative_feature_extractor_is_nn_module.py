# wav2vec2-style audio model: `self.feature_extractor` is a convolutional nn.Module (as in
# transformers' Wav2Vec2Model), not an HF FeatureExtractor preprocessing object.
# tcfix: no TCF102 finding.
import torch
from torch import nn


class ConvFeatureEncoder(nn.Module):
    def __init__(self, dim: int = 512):
        super().__init__()
        self.conv_layers = nn.ModuleList(
            [nn.Conv1d(1, dim, 10, stride=5)] + [nn.Conv1d(dim, dim, 3, stride=2) for _ in range(4)]
        )

    def forward(self, input_values):
        hidden = input_values[:, None]
        for conv in self.conv_layers:
            hidden = nn.functional.gelu(conv(hidden))
        return hidden


class SpeechEncoder(nn.Module):
    def __init__(self, dim: int = 512, hidden: int = 768):
        super().__init__()
        self.feature_extractor = ConvFeatureEncoder(dim)
        self.feature_projection = nn.Linear(dim, hidden)

    def forward(self, input_values):
        extract_features = self.feature_extractor(input_values).transpose(1, 2)
        return self.feature_projection(extract_features)
