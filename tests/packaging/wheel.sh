#!/usr/bin/env bash
# Packaging test: `maturin build` (maturin pinned, from PyPI) makes a wheel from pyproject.toml; the
# wheel is installed into a fresh venv and its `tcfix` binary is run: `--version` must print
# `tcfix <version in Cargo.toml>`, and it must find a hazard in a small model. Then `pip install
# <checkout>` (the path pre-commit's `language: python` takes) must give the same binary.
#
# Usage: tests/packaging/wheel.sh
# Env:   TCFIX_PACKAGING_CACHE  where the maturin venv lives (default ~/.cache/tcfix-packaging)
#        PYTHON                 interpreter (3.8+) used to make the venvs (default python3)
#        CARGO_TARGET_DIR       honoured by maturin/cargo as usual (default: the checkout's target/,
#                               so a release build already there is reused)
set -euo pipefail

MATURIN_VERSION=1.16.0

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache="${TCFIX_PACKAGING_CACHE:-$HOME/.cache/tcfix-packaging}"
python="${PYTHON:-python3}"
label=wheel
# shellcheck source=tests/packaging/tally.sh
source "$repo/tests/packaging/tally.sh"
started=$SECONDS

tmp="$(mktemp -d "${TMPDIR:-/tmp}/tcfix-wheel.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# What the wheel must say: Cargo.toml's [package] name, version, description, license.
cargo_field() {
    sed -n '/^\[package\]/,/^\[/p' "$repo/Cargo.toml" | sed -n "s/^$1 *= *\"\\(.*\\)\"/\\1/p" | head -n1
}
version="$(cargo_field version)"
description="$(cargo_field description)"
license="$(cargo_field license)"
[[ -n "$version" ]] || die "could not read the version from $repo/Cargo.toml"
say "Cargo.toml: tcfix $version"

# --- maturin, pinned, in a venv that is kept between runs --------------------------------------
command -v cargo >/dev/null || die "cargo is not on PATH: maturin builds tcfix with it (Rust 1.95+)"
mvenv="$cache/maturin-$MATURIN_VERSION"
if [[ ! -x "$mvenv/bin/maturin" ]]; then
    say "creating $mvenv"
    rm -rf "$mvenv"
    mkdir -p "$cache"
    "$python" -m venv "$mvenv" || die "could not create a venv at $mvenv with $python"
    "$mvenv/bin/python" -m pip install --quiet --disable-pip-version-check "maturin==$MATURIN_VERSION" \
        || die "pip could not install maturin==$MATURIN_VERSION into $mvenv"
fi
"$mvenv/bin/maturin" --version | grep -qx "maturin $MATURIN_VERSION" \
    || die "$mvenv/bin/maturin is not maturin $MATURIN_VERSION (remove $mvenv and rerun)"

# --- 1. maturin build -------------------------------------------------------------------------
t=$SECONDS
if (cd "$repo" && "$mvenv/bin/maturin" build --release --out "$tmp/dist") >"$tmp/build.log" 2>&1; then
    shopt -s nullglob
    wheels=("$tmp"/dist/*.whl)
    shopt -u nullglob
    if ((${#wheels[@]} == 1)); then
        wheel="${wheels[0]}"
        ok "maturin build made $(basename "$wheel") ($((SECONDS - t)) s)"
    else
        show "$tmp/build.log"
        die "maturin build made ${#wheels[@]} wheels in $tmp/dist, expected 1: ${wheels[*]:-none}"
    fi
else
    show "$tmp/build.log"
    die "maturin build --release failed (output above)"
fi

# --- 2. the wheel's metadata is Cargo.toml's --------------------------------------------------
"$mvenv/bin/python" - "$wheel" >"$tmp/meta.txt" <<'EOF'
import sys, zipfile
from email.parser import Parser
z = zipfile.ZipFile(sys.argv[1])
[meta] = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
m = Parser().parsestr(z.read(meta).decode())
print("name=" + (m["Name"] or ""))
print("version=" + (m["Version"] or ""))
print("summary=" + (m["Summary"] or ""))
print("license=" + (m["License-Expression"] or m["License"] or ""))
print("requires-python=" + (m["Requires-Python"] or ""))
for n in z.namelist():
    print("file=" + n)
EOF
expect_meta() {
    if grep -qxF "$1=$2" "$tmp/meta.txt"; then
        ok "wheel metadata $1 = $2"
    else
        fail "wheel metadata $1: expected '$2', got '$(sed -n "s/^$1=//p" "$tmp/meta.txt")'"
    fi
}
expect_meta name tcfix
expect_meta version "$version"
expect_meta summary "$description"
expect_meta license "$license"
if grep -qx "file=tcfix-$version.data/scripts/tcfix" "$tmp/meta.txt"; then
    ok "the wheel carries the binary as tcfix-$version.data/scripts/tcfix"
else
    fail "no tcfix-$version.data/scripts/tcfix in the wheel; it holds:"
    grep '^file=' "$tmp/meta.txt" | show /dev/stdin
fi

# --- 3. installed into a fresh venv, the binary runs --------------------------------------------
# A small model: a print in forward is TCF101 (line 8, column 9); the same print in __init__ is not.
mkdir -p "$tmp/proj"
cat >"$tmp/proj/model.py" <<'EOF'
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        y = x * 2
        print("y", y.shape)
        return y
EOF
cat >"$tmp/proj/clean.py" <<'EOF'
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        print("building Net")

    def forward(self, x):
        return x * 2
EOF

# `check_installed VENV WHAT`: tcfix in VENV/bin prints its version and finds the hazard.
check_installed() {
    local venv="$1" what="$2" out rc
    local bin="$venv/bin/tcfix"
    if [[ ! -x "$bin" ]]; then
        fail "$what: no $bin after the install"
        return
    fi
    rc=0
    out="$("$bin" --version 2>&1)" || rc=$?
    if [[ $rc -eq 0 && "$out" == "tcfix $version" ]]; then
        ok "$what: \`tcfix --version\` prints '$out'"
    else
        fail "$what: \`tcfix --version\` exited $rc and printed '$out', expected 'tcfix $version'"
    fi
    rc=0
    (cd "$tmp/proj" && "$bin" model.py) >"$tmp/check.out" 2>&1 || rc=$?
    if [[ $rc -eq 1 ]] && grep -q '^model\.py:8:9: TCF101 ' "$tmp/check.out"; then
        ok "$what: finds TCF101 at model.py:8:9 (exit 1)"
    else
        fail "$what: \`tcfix model.py\` exited $rc, expected 1 with a 'model.py:8:9: TCF101' line; it printed:"
        show "$tmp/check.out"
    fi
    rc=0
    (cd "$tmp/proj" && "$bin" clean.py) >"$tmp/check.out" 2>&1 || rc=$?
    if [[ $rc -eq 0 ]]; then
        ok "$what: a print in __init__ only is not reported (exit 0)"
    else
        fail "$what: \`tcfix clean.py\` exited $rc, expected 0; it printed:"
        show "$tmp/check.out"
    fi
}

t=$SECONDS
"$python" -m venv "$tmp/venv-wheel" || die "could not create a venv with $python"
if "$tmp/venv-wheel/bin/python" -m pip install --quiet --disable-pip-version-check --no-index "$wheel" \
    >"$tmp/install.log" 2>&1; then
    ok "pip install $(basename "$wheel") into a fresh venv ($((SECONDS - t)) s)"
    check_installed "$tmp/venv-wheel" "wheel"
else
    show "$tmp/install.log"
    fail "pip install of the wheel failed (output above)"
fi

# --- 4. pip install <checkout>: the PEP 517 path (maturin from build-system.requires) ------------
t=$SECONDS
"$python" -m venv "$tmp/venv-src" || die "could not create a venv with $python"
if "$tmp/venv-src/bin/python" -m pip install --quiet --disable-pip-version-check "$repo" \
    >"$tmp/install.log" 2>&1; then
    ok "pip install $repo into a fresh venv ($((SECONDS - t)) s)"
    check_installed "$tmp/venv-src" "pip install ."
else
    show "$tmp/install.log"
    fail "pip install $repo failed (output above)"
fi

say "took $((SECONDS - started)) s"
summary
((failed == 0))
