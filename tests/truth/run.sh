#!/usr/bin/env bash
# The truth tier: real models from pinned PyPI packages run under torch.compile (CPU), judging
# tcfix's findings and fixes (tests/truth/run.py says how). Without arguments, CI's subset: the
# models in tests/truth/ci-models.txt, compared with snapshots/truth-ci.txt. scripts/truth runs the
# whole catalogue (snapshots/truth.txt).
#
# Usage: tests/truth/run.sh [run.py options...]     e.g. --update to rewrite the snapshot
# Env:   TCFIX_TRUTH_VENV  venv to create or reuse (default: the oracle's, ~/.cache/tcfix-oracle/venv,
#                          whose pins are a subset of ours: one torch download for both tiers)
#        TCFIX_TRUTH_OUT   where results and traces are cached (default ~/.cache/tcfix-truth/runs)
#        TCFIX_BIN         use this tcfix binary instead of building target/release/tcfix
#        PYTHON            interpreter (3.11+) used to create the venv (default python3)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${TCFIX_TRUTH_VENV:-${TCFIX_ORACLE_VENV:-$HOME/.cache/tcfix-oracle/venv}}"
die() { echo "truth: $*" >&2; exit 1; }

if [[ ! -x "$venv/bin/python" ]]; then
    echo "truth: creating $venv (torch and nine model packages: a large download)" >&2
    "${PYTHON:-python3}" -m venv "$venv" || die "could not create a venv at $venv"
fi
# Idempotent: pip returns at once when the pins are already installed.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    -r "$repo/tests/truth/requirements.txt" -c "$repo/tests/truth/constraints.txt" \
    || die "pip could not install tests/truth/requirements.txt into $venv"

if [[ -n "${TCFIX_BIN:-}" ]]; then
    tcfix="$TCFIX_BIN"
else
    (cd "$repo" && cargo build --release --locked --quiet) || die "cargo build --release --locked failed"
    tcfix="${CARGO_TARGET_DIR:-$repo/target}/release/tcfix"
fi

if [[ " $* " != *" --models "* && " $* " != *" --full "* ]]; then
    set -- --models "$repo/tests/truth/ci-models.txt" --snapshot "$repo/snapshots/truth-ci.txt" "$@"
fi
args=()
for arg in "$@"; do [[ "$arg" == --full ]] || args+=("$arg"); done
exec "$venv/bin/python" "$repo/tests/truth/run.py" --tcfix "$tcfix" "${args[@]}"
