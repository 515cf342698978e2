"""One training step of TinyModel under torch.compile; saves the loss and the gradients to
$TCFIX_PROVE_OUTPUT when tcfix prove asks for them."""
import os

import torch
from torch import nn

from model import TinyModel


def main():
    torch.manual_seed(0)
    model = TinyModel()
    compiled = torch.compile(model, backend="eager")
    ids = torch.randint(0, 32, (2, 8))
    logits = compiled(ids)
    loss = nn.functional.cross_entropy(logits.flatten(0, 1), ids.flatten())
    loss.backward()
    if "TCFIX_PROVE_OUTPUT" in os.environ:
        grads = {name: p.grad for name, p in model.named_parameters()}
        torch.save({"loss": loss.detach(), "grads": grads}, os.environ["TCFIX_PROVE_OUTPUT"])


if __name__ == "__main__":
    main()
