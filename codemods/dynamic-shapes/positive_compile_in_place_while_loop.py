import torch


def evaluate(model, batches):
    model.compile(dynamic=False)
    model.eval()
    total, step = 0.0, 0
    with torch.no_grad():
        while step < len(batches):
            total += model(batches[step]).sum().item()
            step += 1
    return total / max(step, 1)
