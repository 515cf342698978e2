"""TCF108 positive (low): the deprecated context manager around an evaluation loop that is not
compiled. No graph break here, but it warns on every use and will be removed: the same Safe fix."""
import torch
import torch.backends.cuda


@torch.no_grad()
def evaluate(model, loader):
    total = 0.0
    with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False):
        for x, y in loader:
            total += torch.nn.functional.cross_entropy(model(x), y).item()
    return total / len(loader)
