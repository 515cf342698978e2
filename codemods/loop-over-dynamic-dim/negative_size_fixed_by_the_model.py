"""Loops over a dimension of an input whose size the model fixes, not the data: the stacked
outputs of the decoder layers (one per level), the codebooks of an audio-token input, each looked
up in its own embedding table, and the frames of a clip, each given its own learned temporal
embedding. The loop variable names the level, or indexes one of the module's own containers, so
each new input does not bring a new count: the loop is unrolled once.
tcfix: nothing."""
import torch
from torch import nn


class BoxHead(nn.Module):
    def __init__(self, dim: int = 16):
        super().__init__()
        self.box = nn.Linear(dim, 4)

    def forward(self, decoder_outputs):
        stacked = decoder_outputs.intermediate_states
        boxes = []
        for level in range(stacked.shape[0]):
            boxes.append(self.box(stacked[level]))
        return torch.stack(boxes)


class CodebookEmbedding(nn.Module):
    def __init__(self, codebooks: int = 4, vocab: int = 32, dim: int = 16):
        super().__init__()
        self.tables = nn.ModuleList(nn.Embedding(vocab, dim) for _ in range(codebooks))

    def forward(self, codes: torch.Tensor) -> torch.Tensor:
        return sum(self.tables[book](codes[:, book]) for book in range(codes.shape[1]))


class ClipEncoder(nn.Module):
    def __init__(self, frames: int = 4, dim: int = 16):
        super().__init__()
        self.frame_encoder = nn.Linear(dim, dim)
        self.temporal = nn.ParameterList(nn.Parameter(torch.zeros(dim)) for _ in range(frames))

    def forward(self, clip: torch.Tensor) -> torch.Tensor:
        per_frame = []
        for frame in range(clip.shape[1]):
            per_frame.append(self.frame_encoder(clip[:, frame]) + self.temporal[frame])
        return torch.cat(per_frame, dim=1)
