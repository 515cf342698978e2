"""TCF302 negative: the original module's state_dict, `model.compile()` (keys unchanged), and the
compiled wrapper rebound to something else before it is saved."""
import torch


def train(model, path: str):
    compiled = torch.compile(model)
    torch.save(model.state_dict(), path)
    model.compile()
    torch.save(model.state_dict(), path)
    compiled = model
    torch.save(compiled.state_dict(), path)
