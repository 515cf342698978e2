#!/usr/bin/env bash
# The tcfix oracle: runs every fixture's model under real torch.compile (CPU) before and after tcfix's
# fix, and checks that graph breaks / recompiles go away and outputs stay equal. The fixtures are the
# codemods/*/ files that define oracle_cases(), and the whole models in tests/oracle/models/ (run with
# --apply and --apply --unsafe-fixes, checked against issue #13's whole-model targets; a target
# today's fixes miss shows as GAP with its reason, and does not fail the run).
#
# Usage: tests/oracle/run.sh [run.py options...]    e.g. tests/oracle/run.sh --filter stateful-hook -v
# Env:   TCFIX_ORACLE_VENV  venv to create or reuse (default ~/.cache/tcfix-oracle/venv)
#        PYTHON             interpreter (3.11+) used to create the venv (default python3)
#        TCFIX_BIN          use this tcfix binary instead of building target/release/tcfix
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${TCFIX_ORACLE_VENV:-$HOME/.cache/tcfix-oracle/venv}"
requirements="$repo/tests/oracle/requirements.txt"

die() {
    echo "oracle: $*" >&2
    exit 1
}

if [[ ! -x "$venv/bin/python" ]]; then
    echo "oracle: creating $venv (torch is a large download)" >&2
    "${PYTHON:-python3}" -m venv "$venv" || die "could not create a venv at $venv with ${PYTHON:-python3}"
fi
"$venv/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || die "$venv has $("$venv/bin/python" --version 2>&1); the oracle needs Python 3.11+ (set PYTHON, remove the venv)"

# Idempotent: pip returns at once when the pins are already installed.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" \
    || die "pip could not install $requirements into $venv"
"$venv/bin/python" -c 'import torch, tokenizers' \
    || die "torch/tokenizers are installed in $venv but do not import (see above); remove the venv and rerun"

if [[ -n "${TCFIX_BIN:-}" ]]; then
    tcfix="$TCFIX_BIN"
else
    (cd "$repo" && cargo build --release --locked) || die "cargo build --release --locked failed"
    tcfix="${CARGO_TARGET_DIR:-$repo/target}/release/tcfix"
fi

exec "$venv/bin/python" "$repo/tests/oracle/run.py" --tcfix "$tcfix" "$@"
