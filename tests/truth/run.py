#!/usr/bin/env python3
"""The truth tier: real models from pinned PyPI packages, run under torch.compile, judge tcfix.

usage: run.py --tcfix BIN [--models FILE] [--packages a,b] [--jobs N] [--timeout S] [--out DIR]
              [--variants a,b,c] [--snapshot FILE [--update]] [--table FILE]

1. Runs every model of the catalogue (tests/truth/packages/, or the `package/name` lines of --models)
   in its own process (run_model.py) with TORCH_TRACE, N at a time, each with a timeout. Results and
   traces are cached under --out keyed by what produced them, so a second run only redoes what
   changed, and an interrupted run resumes.
2. Joins the traces to tcfix's findings on the installed packages' sources (`tcfix --trace`): each
   runtime graph break and recompile at its package line, found or missed; each finding in a function
   that ran, confirmed, not seen, or not seen but stating its condition (join.py).
3. Fix truth: copies the packages, applies `tcfix --apply` (b) and `--apply --unsafe-fixes` (c),
   reruns the models whose compiled frames lie in a changed file, and judges each fix kind (removed,
   moved, left) and each model (worse or not; outputs and gradients equal to the unfixed run).
4. Writes the verdict lines (--snapshot: compared with the kept file, or rewritten with --update)
   and the tables (--table, markdown).

A model that fails to build or to run eagerly is recorded with its error and skipped; a crash or a
timeout of one model never stops the run; a corrupt trace is reported by tcfix and the rest is read.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import join  # noqa: E402
from packages import PACKAGES, package_module  # noqa: E402

SITE = Path(sysconfig.get_paths()["purelib"])


def file_hash(*paths: Path) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(path.read_bytes() if path.is_file() else b"-")
    return h.hexdigest()[:16]


def tree_hash(root: Path) -> str:
    """The sources of a package tree, for the cache key of a fixed copy."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def catalogue(models_file: Path | None, packages: list[str]) -> list[tuple[str, str]]:
    if models_file:
        pairs = [tuple(line.split("/", 1)) for line in models_file.read_text().splitlines()
                 if line.strip() and not line.startswith("#")]
        return [(p, n) for p, n in pairs if p in packages]
    models = []
    for package in packages:
        try:
            models.extend((package, name) for name in package_module(package).names())
        except Exception as err:  # noqa: BLE001 - a package that does not import is skipped, said
            print(f"truth: {package}: cannot list its models ({type(err).__name__}: {err}); skipped", file=sys.stderr)
    return models


def source_dir(package: str) -> str:
    """The folder in site-packages that holds the package's sources (its module may say otherwise)."""
    return getattr(package_module(package), "SOURCE", package)


def slug(package: str, name: str) -> str:
    return f"{package}__{name}".replace("/", "_").replace(" ", "_")


def run_one(package: str, name: str, outdir: Path, key: str, timeout: int, pythonpath: str | None) -> dict:
    """One model in its own process; the cached result when its key matches."""
    result_file, key_file = outdir / "result.json", outdir / "key"
    if result_file.is_file() and key_file.is_file() and key_file.read_text() == key:
        return json.loads(result_file.read_text())
    shutil.rmtree(outdir, ignore_errors=True)
    outdir.mkdir(parents=True)
    env = dict(os.environ, TORCH_TRACE=str(outdir / "trace"), HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    started = time.monotonic()
    with open(outdir / "stderr.txt", "wb") as err:
        try:
            proc = subprocess.run([sys.executable, str(HERE / "run_model.py"), package, name, str(outdir)],
                                  stdout=subprocess.DEVNULL, stderr=err, timeout=timeout, env=env)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
    if result_file.is_file():
        result = json.loads(result_file.read_text())
    else:
        tail = (outdir / "stderr.txt").read_text(errors="replace").strip().splitlines()[-1:] or [""]
        result = {"package": package, "name": name, "status": "timeout" if code == "timeout" else "crashed",
                  "error": f"exit {code}: {tail[0][:200]}", "phases": {},
                  "seconds": round(time.monotonic() - started, 1)}
        result_file.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    key_file.write_text(key)
    return result


def run_models(models, out: Path, key_of, jobs: int, timeout: int, pythonpath: str | None, label: str) -> dict:
    results: dict[tuple[str, str], dict] = {}
    done = 0

    def task(model):
        package, name = model
        return model, run_one(package, name, out / slug(package, name), key_of(package), timeout, pythonpath)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for model, result in pool.map(task, models):
            results[model] = result
            done += 1
            status = result.get("status")
            if status != "ran" or os.environ.get("TCFIX_TRUTH_VERBOSE"):
                print(f"truth[{label}] {done}/{len(models)} {model[0]}/{model[1]}: {status}"
                      f" {result.get('error') or ''}".rstrip(), file=sys.stderr)
    return results


def apply_fixes(tcfix: Path, packages: list[str], site: Path, unsafe: bool) -> dict[str, Path]:
    """Copies of the packages' sources with tcfix's fixes applied; returns each package's copy."""
    site.mkdir(parents=True, exist_ok=True)
    roots = {}
    for package in packages:
        source = SITE / source_dir(package)
        copy = site / source_dir(package)
        if not (copy / ".tcfix-applied").is_file():
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__"))
            args = [str(tcfix), "--apply", "--allow-dirty", "--isolated", "--exit-zero", "--quiet", "."]
            if unsafe:
                args.insert(2, "--unsafe-fixes")
            proc = subprocess.run(args, cwd=copy, capture_output=True, text=True)
            if proc.returncode >= 2:
                print(f"truth: tcfix --apply on {package} exited {proc.returncode}: {proc.stderr[-500:]}", file=sys.stderr)
            (copy / ".tcfix-applied").write_text(proc.stderr)
        roots[package] = copy
    return roots


def changed_files(original: Path, fixed: Path) -> set[str]:
    """Package-relative paths of the files a fix changed (`timm/models/vit.py`)."""
    changed = set()
    for path in fixed.rglob("*.py"):
        rel = path.relative_to(fixed)
        if (original / rel).read_bytes() != path.read_bytes():
            changed.add(f"{fixed.name}/{rel}")
    return changed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tcfix", type=Path, required=True)
    parser.add_argument("--models", type=Path, help="a file of package/name lines (default: the whole catalogue)")
    parser.add_argument("--packages", default=",".join(PACKAGES))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=int, default=300, help="seconds per model and variant")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("TCFIX_TRUTH_OUT", Path.home() / ".cache/tcfix-truth/runs")))
    parser.add_argument("--variants", default="a,b,c", help="a: as published, b: --apply, c: --apply --unsafe-fixes")
    parser.add_argument("--snapshot", type=Path, help="the verdict lines kept in the repository")
    parser.add_argument("--update", action="store_true", help="rewrite --snapshot instead of comparing")
    parser.add_argument("--table", type=Path, help="write the tables (markdown) here")
    args = parser.parse_args()
    args.tcfix = args.tcfix.resolve()

    packages = [p for p in args.packages.split(",") if p]
    models = catalogue(args.models, packages)
    packages = sorted({p for p, _ in models})
    print(f"truth: {len(models)} models from {len(packages)} packages, {args.jobs} at a time", file=sys.stderr)
    driver_key = file_hash(HERE / "run_model.py", HERE / "packages" / "__init__.py", HERE / "requirements.txt")
    variants = args.variants.split(",")

    # (a) as published.
    key_a = {p: driver_key + file_hash(HERE / "packages" / f"{p}.py") for p in packages}
    out_a = args.out / "a"
    results = {"a": run_models(models, out_a, key_a.get, args.jobs, args.timeout, None, "a")}
    dirs = {"a": {m: out_a / slug(*m) for m in models}}
    roots = {"a": {p: SITE / source_dir(p) for p in packages}}

    # (b), (c): the fixed copies, and the models whose compiled frames lie in a changed file.
    for variant in (v for v in variants if v in ("b", "c")):
        site = args.out / variant / "site"
        roots[variant] = apply_fixes(args.tcfix, packages, site, unsafe=variant == "c")
        changed = set().union(*(changed_files(SITE / source_dir(p), roots[variant][p]) for p in packages))
        rerun = [m for m in models if results["a"][m].get("status") == "ran"
                 and any(f in join.compiled_text(dirs["a"][m]) for f in changed)]
        print(f"truth[{variant}]: fixes changed {len(changed)} files; {len(rerun)} models compile code in them",
              file=sys.stderr)
        key_v = {p: key_a[p] + tree_hash(roots[variant][p]) for p in packages}
        out_v = args.out / variant / "runs"
        rerun_results = run_models(rerun, out_v, key_v.get, args.jobs, args.timeout, str(site), variant)
        results[variant] = {m: rerun_results.get(m, results["a"][m]) for m in models}
        dirs[variant] = {m: (out_v / slug(*m) if m in rerun_results else dirs["a"][m]) for m in models}

    verdict = join.judge(args.tcfix, models, packages, results, dirs, roots)
    lines = verdict.lines()
    print(verdict.summary())
    if args.table:
        args.table.write_text(verdict.tables())
    if args.snapshot:
        if args.update:
            args.snapshot.write_text("\n".join(lines) + "\n")
            print(f"truth: rewrote {args.snapshot} ({len(lines)} lines)", file=sys.stderr)
        else:
            kept = args.snapshot.read_text().splitlines() if args.snapshot.is_file() else []
            if kept != lines:
                import difflib
                diff = list(difflib.unified_diff(kept, lines, str(args.snapshot), "this run", lineterm="", n=0))
                print("truth: VIOLATION: the verdicts differ from the kept snapshot (review, then rerun with --update):",
                      file=sys.stderr)
                print("\n".join(diff[:80]), file=sys.stderr)
                return 1
            print(f"truth: verdicts identical to {args.snapshot} ({len(lines)} lines)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
