"""TCF209 edge: a check whose condition spans lines is reported without a fix (the guard would
have to repeat it across lines), and a check on a line shared with other code likewise; a check
with CRLF line endings and tab indentation keeps them."""
import torch
from torch import nn


class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Conv2d(3, 8, 2, 2)

    def forward(self, x):
        H = x.shape[2]
        torch._assert((H % 2 == 0
                       and H > 0), f"bad height {H}")
        W = x.shape[3]; torch._assert(W % 2 == 0, f"bad width {W}")
        return self.proj(x)
