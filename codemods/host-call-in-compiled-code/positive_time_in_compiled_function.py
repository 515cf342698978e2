"""TCF107 positive: a function passed to torch.compile measures itself with `time.monotonic()`,
and a helper it calls sleeps to throttle."""
import time

import torch


def throttle():
    time.sleep(0.0)


def loss_fn(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    began = time.monotonic()
    loss = torch.nn.functional.cross_entropy(logits, target)
    throttle()
    loss_fn.seconds = time.monotonic() - began
    return loss


compiled_loss = torch.compile(loss_fn)
