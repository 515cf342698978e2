#!/usr/bin/env bash
# Runtime evidence end to end (#15): runs the models in tests/evidence/models/ under real
# torch.compile (CPU; a two-process gloo run for per-rank traces) with TORCH_TRACE and TORCH_LOGS,
# then checks that `tcfix --trace` / `--torch-logs` join every graph break and recompile to a
# finding or report it as seen at runtime, at the right line, per rank; and, where tlparse
# installs from PyPI, that tcfix lists every break and recompile tlparse lists. The logs are
# written to a temporary directory and removed.
#
# Needs the oracle's venv (run tests/oracle/run.sh first: it creates it with torch).
# Env:   TCFIX_ORACLE_VENV  the venv (default ~/.cache/tcfix-oracle/venv)
#        TCFIX_BIN          use this tcfix binary instead of building target/release/tcfix
#        TCFIX_KEEP_LOGS    a directory to write the logs to and keep (for a look by hand)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${TCFIX_ORACLE_VENV:-$HOME/.cache/tcfix-oracle/venv}"

die() {
    echo "evidence: $*" >&2
    exit 1
}

[[ -x "$venv/bin/python" ]] || die "no venv at $venv: run tests/oracle/run.sh first (it installs torch)"
"$venv/bin/python" -c 'import torch' || die "torch does not import in $venv"

# tlparse is optional: where its wheel installs, the check compares with it; else it says so.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'tlparse==0.4.3' 2>/dev/null \
    || echo "evidence: tlparse did not install from PyPI; the comparison with it is skipped" >&2

if [[ -n "${TCFIX_BIN:-}" ]]; then
    tcfix="$TCFIX_BIN"
else
    (cd "$repo" && cargo build --release --locked) || die "cargo build --release --locked failed"
    tcfix="${CARGO_TARGET_DIR:-$repo/target}/release/tcfix"
fi

if [[ -n "${TCFIX_KEEP_LOGS:-}" ]]; then
    work="$TCFIX_KEEP_LOGS"
    mkdir -p "$work"
else
    work="$(mktemp -d "${TMPDIR:-/tmp}/tcfix-evidence.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
fi

"$venv/bin/python" "$repo/tests/evidence/check.py" --tcfix "$tcfix" --work "$work"
