"""A loop over an input's size whose body already breaks the graph (a per-row `.tolist()`, a
`nonzero`, a print in a helper the loop calls), as in video trackers and multimodal mergers that
walk each sample. Dynamo meets a graph break inside a loop, gives up on the frame ("graph break
in loop") and runs all of it eagerly: nothing is unrolled, so TCF204 has nothing to say; the
break is the finding (critical, from its own rule). Measured under torch 2.15: no graph at all
for the frame, however many sizes it sees."""
import torch
from torch import nn


class RowWalker(nn.Module):
    def forward(self, boxes: torch.Tensor, scores: torch.Tensor):
        kept = []
        for row in range(boxes.shape[0]):
            ids = scores[row].nonzero()
            kept.append(boxes[row, ids].sum())
        return torch.stack(kept)


class SpanMerger(nn.Module):
    def _report(self, span):
        print("span", span)

    def forward(self, tokens: torch.Tensor, spans: torch.Tensor):
        out = tokens.clone()
        for i in range(spans.shape[0]):
            start, end = spans[i].tolist()
            out[i, start:end] = 0
        for j in range(tokens.size(1)):
            self._report(j)
        return out
