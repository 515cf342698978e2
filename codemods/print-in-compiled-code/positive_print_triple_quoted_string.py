# A print whose argument is a multi-line triple-quoted string. When the call is wrapped, the lines
# of code move in, but the lines INSIDE the string must stay byte for byte (their text is output).
# tcfix: TCF101 (high), fix wraps the call; the string's inner lines are not re-indented.
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, dim: int, vocab: int):
        super().__init__()
        self.proj = nn.Linear(dim, vocab, bias=False)

    def forward(self, hidden):
        print("""Head.forward
  hidden: %s
  weight: %s""" % (tuple(hidden.shape), tuple(self.proj.weight.shape)))
        print(
            f"""logits will have
    vocab={self.proj.out_features} columns""",
            flush=True,
        )
        return self.proj(hidden)
