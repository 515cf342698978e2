"""TCF301 positive: `model = torch.compile(model)`, an evaluation, then a pre-hook on a submodule
reached through the compiled wrapper (`model.encoder`): ignored by the compiled graph."""
import torch


def evaluate_then_probe(model, batch):
    model = torch.compile(model)
    baseline = model(batch)
    seen = []
    model.encoder.register_forward_pre_hook(lambda module, args: seen.append(args[0].shape))
    probed = model(batch)
    return baseline, probed, seen
