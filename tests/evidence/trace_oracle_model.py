"""Run one of the oracle's whole models (tests/oracle/models/) the way its first inference case
does, under torch.compile with the eager backend, so that TORCH_TRACE records what Dynamo did.

Usage: python trace_oracle_model.py tests/oracle/models/oracle_vision_language_model.py
"""
import importlib.util
import sys

import torch


def main(path):
    spec = importlib.util.spec_from_file_location("oracle_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    case = next(case for case in module.oracle_cases() if not case.get("train"))
    model = case["factory"]()
    compiled = torch.compile(model, backend="eager")
    with torch.no_grad():
        for step in case["inputs"]:
            args = step(model) if callable(step) else step
            compiled(*args)


if __name__ == "__main__":
    main(sys.argv[1])
