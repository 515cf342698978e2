"""Oracle fixture for print-in-compiled-code (TCF101).

A small ResNet-style image classifier whose `forward` kept its debugging output: a print of the input
shape, a logger call on the feature map and a print of the logits. Under torch.compile each of them is
a graph break. tcfix wraps each statement in `if not torch.compiler.is_compiling():`, so eager runs keep
their output and the compiled forward is one graph.
"""
import logging

import torch
import torch.nn.functional as F
from torch import nn

logger = logging.getLogger(__name__)


class ResidualBlock(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(x + out)


class SmallResNet(nn.Module):
    def __init__(self, in_channels: int = 3, width: int = 16, depth: int = 2, num_classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(in_channels, width, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(inplace=True),
        )
        self.stages = nn.Sequential(*[ResidualBlock(width) for _ in range(depth)])
        self.head = nn.Linear(width, num_classes)

    def forward(self, images):
        print(f"SmallResNet.forward: images {tuple(images.shape)}")
        features = self.stages(self.stem(images))
        logger.info("feature map %s", tuple(features.shape))
        pooled = features.mean(dim=(2, 3))
        logits = self.head(pooled)
        print("logits", logits.shape, "max", logits.max())
        return logits


def _eval_model():
    return SmallResNet().eval()


def oracle_cases():
    batches = [(torch.randn(4, 3, 16, 16),) for _ in range(3)]
    return [
        {
            "name": "inference",
            "factory": _eval_model,
            "inputs": batches,
            "expect": {"graph_breaks": (">=1", 0), "graphs": (">1", 1), "eager_frames": (None, 0)},
        },
        {
            # training mode: BatchNorm updates its running stats inside the compiled region.
            "name": "training",
            "factory": SmallResNet,
            "inputs": batches,
            "train": True,
            "atol": 1e-5,
            "expect": {"graph_breaks": (">=1", 0), "graphs": (">1", 1), "eager_frames": (None, 0)},
        },
    ]
