"""TCF302 positive: `model = torch.compile(model)` then `model.load_state_dict(...)` of a plain
checkpoint: missing `_orig_mod.` keys, unexpected plain keys."""
import torch


def resume(model, path: str):
    model = torch.compile(model, mode="reduce-overhead")
    model.load_state_dict(torch.load(path, map_location="cpu"))
    return model
