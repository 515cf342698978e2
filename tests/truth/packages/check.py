"""Check the catalogue: build every case, run its inputs eagerly and its loss backward, report per case.

    python check.py [package ...] [--only NAME,NAME] [--timeout 60] [--jobs 1] [--batch N] [--all]

Each case runs in a child process with a timeout (a crash or hang costs one case, not the run).
`--batch N` lets one child run up to N cases in turn (each still under its own alarm), which saves
the interpreter and import start-up per case when pruning a large package; a child that dies is
restarted on the cases it had not reached. Prints `ok|failed|timeout  seconds  package:name  error`.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Run as a script, this folder would shadow the real packages (packages/transformers.py).
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


class CaseTimeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise CaseTimeout("timeout")


def _params(model) -> int:
    try:
        return sum(p.numel() for p in model.parameters())
    except Exception:
        return -1


def _check_one(module, name: str) -> dict:
    """Build `name`, run every input eagerly (eval), one loss backward (train mode), and generate() if any."""
    import torch

    torch.manual_seed(0)
    case = module.build(name)
    model = case.model
    with torch.no_grad():
        for make in case.inputs:
            torch.manual_seed(0)
            args, kwargs = make()
            model(*args, **kwargs)
    torch.manual_seed(0)
    args, kwargs = case.inputs[0]()
    model.train()  # a training step as users take it (dropout on, EMA codebooks updating)
    loss = case.loss(model(*args, **kwargs))
    model.eval()
    if loss.dim() != 0:
        raise ValueError(f"loss is not 0-d: shape {tuple(loss.shape)}")
    loss.backward()
    if case.generate is not None:
        with torch.no_grad():
            case.generate(model)
    return {"params": _params(model), "inputs": len(case.inputs)}


def child(package: str, names: list[str], timeout: int) -> None:
    """Run cases in turn; one JSON line per case on stdout (a `start` line first, so a crash is placed)."""
    import importlib
    import traceback

    import torch

    torch.set_num_threads(1)
    module = importlib.import_module(f"packages.{package}")
    signal.signal(signal.SIGALRM, _on_alarm)
    for name in names:
        print(json.dumps({"start": name}), flush=True)
        started = time.time()
        result = {"name": name}
        signal.alarm(timeout)
        try:
            result.update(_check_one(module, name))
            result["status"] = "ok"
        except CaseTimeout:
            result["status"] = "timeout"
            result["error"] = f"over {timeout} s"
        except BaseException as error:  # a case's failure of any kind is its result
            result["status"] = "failed"
            lines = traceback.format_exception_only(type(error), error)
            result["error"] = lines[-1].strip().splitlines()[-1][:300] if lines else repr(error)
        finally:
            signal.alarm(0)
        result["seconds"] = round(time.time() - started, 2)
        print(json.dumps(result), flush=True)


def _run_batch(package: str, names: list[str], timeout: int, report) -> None:
    """Run `names` in child processes until each has a result; a dead child's current case is failed."""
    pending = list(names)
    while pending:
        command = [sys.executable, __file__, "--child", package, "--timeout", str(timeout), *pending]
        started = time.time()
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        killer = threading.Timer(timeout * len(pending) + 120, process.kill)
        killer.start()
        current = None
        stderr_tail: list[str] = []
        reader = threading.Thread(target=lambda: stderr_tail.extend(process.stderr.readlines()[-5:]))
        reader.start()
        for line in process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if "start" in message:
                current, started = message["start"], time.time()
            elif message.get("name") in pending:
                pending.remove(message["name"])
                current = None
                report(package, message)
        process.wait()
        killer.cancel()
        reader.join()
        if current is None and pending:  # died before its first case (import): charge that one, retry the rest
            current = pending[0]
        if current is not None and current in pending:
            pending.remove(current)
            tail = (stderr_tail[-1].strip() if stderr_tail else "") or f"exit {process.returncode}"
            report(package, {"name": current, "status": "crashed", "error": tail[:300],
                             "seconds": round(time.time() - started, 2)})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("packages", nargs="*")
    parser.add_argument("--only", default="", help="comma-separated case names")
    parser.add_argument("--timeout", type=int, default=60)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=1, help="cases per child process")
    parser.add_argument("--json", help="also write every result as a JSON line to this file")
    parser.add_argument("--all", action="store_true",
                        help="check every candidate a package module's generic rules offer (candidates()), "
                             "not only its catalogue (names())")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.packages, args.timeout)
        return 0

    import importlib

    from packages import PACKAGES

    lock = threading.Lock()
    results = []
    sink = open(args.json, "a") if args.json else None

    def report(package, message):
        with lock:
            message["package"] = package
            results.append(message)
            print(f"{message['status']:8} {message.get('seconds', 0):6.1f}  {package}:{message['name']}  "
                  f"{message.get('error', '')}", flush=True)
            if sink:
                sink.write(json.dumps(message) + "\n")
                sink.flush()

    work = []
    only = {n for n in args.only.split(",") if n}
    for package in args.packages or PACKAGES:
        module = importlib.import_module(f"packages.{package}")
        names = module.candidates() if args.all and hasattr(module, "candidates") else module.names()
        if only:
            names = [n for n in names if n in only]
        work += [(package, names[i:i + args.batch]) for i in range(0, len(names), args.batch)]

    def worker():
        while True:
            with lock:
                if not work:
                    return
                package, names = work.pop(0)
            _run_batch(package, names, args.timeout, report)

    threads = [threading.Thread(target=worker) for _ in range(args.jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ok = [r for r in results if r["status"] == "ok"]
    seconds = sum(r.get("seconds", 0) for r in results)
    by_package = {}
    for r in results:
        listed, good = by_package.get(r["package"], (0, 0))
        by_package[r["package"]] = (listed + 1, good + (r["status"] == "ok"))
    for package, (listed, good) in by_package.items():
        print(f"{package}: {good}/{listed} ok")
    print(f"total: {len(ok)}/{len(results)} ok, {seconds / max(len(results), 1):.2f} s per case on average")
    return 0 if len(ok) == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
