#!/usr/bin/env bash
# Packaging test: tcfix as a pre-commit hook, the way a user gets it. A throwaway git repo whose
# .pre-commit-config.yaml points at this checkout (`repo: <path>`, `rev: <commit>`) installs the
# hooks (pre-commit clones the checkout and `pip install`s it: maturin builds tcfix with cargo), then:
#   1. a commit of a clean model passes;
#   2. a commit that adds a `print` to the model's forward is blocked by the `tcfix` hook, and the
#      output names the file and TCF101;
#   3. the same commit with the print guarded by `if not torch.compiler.is_compiling():` passes;
#   4. with the `tcfix-fix` hook, a commit adding a print is stopped with the file rewritten; the
#      rewritten file, staged, commits.
# pre-commit clones committed work only: when the checkout has uncommitted or untracked (not
# ignored) files, its working tree is copied into a temporary repository and committed there, and
# that commit is what the hooks are built from. The checkout itself is never written to.
#
# Usage: tests/packaging/pre_commit.sh
# Env:   TCFIX_PACKAGING_CACHE  where the pre-commit venv and the hook's cargo build directory are
#                               kept between runs (default ~/.cache/tcfix-packaging)
#        PYTHON                 interpreter (3.11+, as pre-commit 4.7 needs) for its venv (default python3)
set -euo pipefail

PRE_COMMIT_VERSION=4.7.0

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache="${TCFIX_PACKAGING_CACHE:-$HOME/.cache/tcfix-packaging}"
python="${PYTHON:-python3}"
label=pre-commit
# shellcheck source=tests/packaging/tally.sh
source "$repo/tests/packaging/tally.sh"
started=$SECONDS

command -v git >/dev/null || die "git is not on PATH"
command -v cargo >/dev/null || die "cargo is not on PATH: the hook's install builds tcfix with it (Rust 1.95+)"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/tcfix-pre-commit.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# Git as a fresh user has it: no global or system config (hooksPath, signing, templates) leaks in.
export GIT_CONFIG_NOSYSTEM=1
export GIT_CONFIG_GLOBAL="$tmp/gitconfig"
git config --global user.name "tcfix packaging test"
git config --global user.email "packaging@tcfix.invalid"
git config --global init.defaultBranch main
git config --global commit.gpgsign false
git config --global advice.detachedHead false
# pre-commit's own home (its clones and hook environments) is fresh every run, so the hook is
# installed from scratch; cargo's build directory for it is kept, so a rerun compiles only tcfix.
export PRE_COMMIT_HOME="$tmp/pre-commit-home"
export CARGO_TARGET_DIR="$cache/pre-commit-target"
unset PRE_COMMIT_ALLOW_NO_CONFIG PRE_COMMIT_NO_CONCURRENCY SKIP

# --- pre-commit, pinned, in a venv that is kept between runs ------------------------------------
pvenv="$cache/pre-commit-$PRE_COMMIT_VERSION"
if [[ ! -x "$pvenv/bin/pre-commit" ]]; then
    "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        || die "pre-commit $PRE_COMMIT_VERSION needs Python 3.11+, $python is $("$python" --version 2>&1) (set PYTHON)"
    say "creating $pvenv"
    rm -rf "$pvenv"
    mkdir -p "$cache"
    "$python" -m venv "$pvenv" || die "could not create a venv at $pvenv with $python"
    "$pvenv/bin/python" -m pip install --quiet --disable-pip-version-check "pre-commit==$PRE_COMMIT_VERSION" \
        || die "pip could not install pre-commit==$PRE_COMMIT_VERSION into $pvenv"
fi
"$pvenv/bin/pre-commit" --version | grep -qx "pre-commit $PRE_COMMIT_VERSION" \
    || die "$pvenv/bin/pre-commit is not pre-commit $PRE_COMMIT_VERSION (remove $pvenv and rerun)"
export PATH="$pvenv/bin:$PATH"

# --- the hook repository: this checkout at HEAD, or a commit of its working tree ----------------
if [[ -z "$(git -C "$repo" status --porcelain --untracked-files=normal)" ]]; then
    src="$repo"
    rev="$(git -C "$repo" rev-parse HEAD)"
    say "hook repository: $src at HEAD $rev"
else
    src="$tmp/tcfix-src"
    git init --quiet "$src"
    # Every tracked or untracked-but-not-ignored file that exists in the working tree.
    (cd "$repo" && git ls-files -z --cached --others --exclude-standard \
        | while IFS= read -r -d '' f; do [[ -e "$f" || -L "$f" ]] && printf '%s\0' "$f"; done \
        | tar --null -T - -cf -) | tar -xf - -C "$src"
    git -C "$src" add --all
    git -C "$src" commit --quiet --no-verify -m "tcfix working tree of $(git -C "$repo" rev-parse --short HEAD), for the pre-commit test"
    rev="$(git -C "$src" rev-parse HEAD)"
    say "the checkout has uncommitted changes: hook repository is a commit of its working tree, $src at $rev"
fi
[[ -f "$src/.pre-commit-hooks.yaml" ]] || die "no .pre-commit-hooks.yaml in $src"

# --- the user's repository ----------------------------------------------------------------------
work="$tmp/work"
mkdir -p "$work/models"
git init --quiet "$work"
cd "$work"
write_config() { # hook ids...
    {
        echo "repos:"
        echo "  - repo: $src"
        echo "    rev: $rev"
        echo "    hooks:"
        for id in "$@"; do echo "      - id: $id"; done
    } >.pre-commit-config.yaml
}
write_config tcfix

cat >models/net.py <<'EOF'
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        y = self.proj(x)
        return torch.relu(y)
EOF
# The hazard: a print in forward (line 12, column 9).
with_print() {
    cat <<'EOF'
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        y = self.proj(x)
        print("proj out", y.shape)
        return torch.relu(y)
EOF
}

t=$SECONDS
say "installing the hooks (pre-commit clones $src and builds tcfix: minutes on a cold cargo cache)"
if timeout 1500 pre-commit install-hooks >"$tmp/install.log" 2>&1; then
    ok "pre-commit install-hooks built the hook environment ($((SECONDS - t)) s)"
else
    show "$tmp/install.log" >&2
    # pre-commit writes the failing command's output to its log.
    [[ -f "$PRE_COMMIT_HOME/pre-commit.log" ]] && show "$PRE_COMMIT_HOME/pre-commit.log" >&2
    die "pre-commit install-hooks failed (output above)"
fi
pre-commit install >/dev/null || die "pre-commit install (the git hook) failed"

# `commit MESSAGE`: git commit with the hooks; sets $rc and $out (the output file).
n=0
commit() {
    n=$((n + 1))
    out="$tmp/commit$n.log"
    rc=0
    timeout 600 git commit -m "$1" >"$out" 2>&1 || rc=$?
    say "git commit -m '$1' exited $rc:"
    show "$out"
}
head_is() { [[ "$(git rev-parse HEAD 2>/dev/null || true)" == "$1" ]]; }

# 1. clean model: the hook runs and passes.
git add .pre-commit-config.yaml models/net.py
commit "a clean model"
if [[ $rc -eq 0 ]] && grep -q '^tcfix (torch.compile hazards)\.*Passed' "$out"; then
    ok "a clean model commits; the tcfix hook ran and passed"
else
    die "the commit of a clean model exited $rc, expected 0 with the tcfix hook 'Passed' (output above)"
fi
clean_head="$(git rev-parse HEAD)"

# 2. a print in forward: the tcfix hook blocks the commit, naming the file and TCF101.
with_print >models/net.py
git add models/net.py
commit "print in forward"
if [[ $rc -ne 0 ]] && grep -q '^tcfix (torch.compile hazards)\.*Failed' "$out" \
    && grep -q '^models/net\.py:12:9: TCF101 ' "$out" && head_is "$clean_head"; then
    ok "a print in forward is blocked: exit $rc, 'models/net.py:12:9: TCF101' reported, nothing committed"
else
    fail "the commit of a print in forward exited $rc; expected non-zero, the tcfix hook 'Failed' with a 'models/net.py:12:9: TCF101' line, and HEAD still at the clean commit (output above)"
fi

# 3. the print guarded by hand: the commit passes.
sed -i 's/^        print("proj out", y.shape)$/        if not torch.compiler.is_compiling():\n            print("proj out", y.shape)/' models/net.py
grep -q '^            print("proj out", y.shape)$' models/net.py || die "could not guard the print in models/net.py"
git add models/net.py
commit "print in forward, guarded"
if [[ $rc -eq 0 ]] && grep -q '^tcfix (torch.compile hazards)\.*Passed' "$out" && ! head_is "$clean_head"; then
    ok "with the print guarded by torch.compiler.is_compiling() the commit passes"
else
    fail "the commit of the guarded print exited $rc; expected 0 with the tcfix hook 'Passed' (output above)"
fi

# 4. the tcfix-fix hook rewrites the file; the rewritten file, staged, commits.
env_bin=("$PRE_COMMIT_HOME"/repo*/py_env-*/bin/tcfix)
if [[ ! -x "${env_bin[0]}" ]]; then
    fail "no tcfix binary in the hook environment ($PRE_COMMIT_HOME/repo*/py_env-*/bin/tcfix)"
elif ! "${env_bin[0]}" --help | grep -q -- '--allow-dirty'; then
    skip "tcfix-fix: the tcfix built from $rev has no --allow-dirty option yet (the hook's entry needs it)"
else
    write_config tcfix-fix
    with_print | sed 's/class Net/class Net2/' >models/net2.py
    git add .pre-commit-config.yaml models/net2.py
    before="$(git rev-parse HEAD)"
    commit "print in forward, with tcfix-fix"
    if [[ $rc -ne 0 ]] && grep -q '^tcfix --apply (fix torch.compile hazards)\.*Failed' "$out" \
        && grep -q 'files were modified by this hook' "$out" && head_is "$before" \
        && grep -q '^        if not torch\.compiler\.is_compiling():$' models/net2.py \
        && grep -q '^            print("proj out", y.shape)$' models/net2.py; then
        ok "tcfix-fix stops the commit (exit $rc) and guards the print in models/net2.py"
    else
        fail "the commit with tcfix-fix exited $rc; expected non-zero with 'files were modified by this hook' and the print guarded in models/net2.py, which reads:"
        show models/net2.py >&2
    fi
    git add models/net2.py
    commit "print in forward, fixed by tcfix-fix"
    if [[ $rc -eq 0 ]] && grep -q '^tcfix --apply (fix torch.compile hazards)\.*Passed' "$out" && ! head_is "$before"; then
        ok "the file tcfix-fix rewrote, staged, commits"
    else
        fail "the commit of the fixed file exited $rc; expected 0 with the tcfix-fix hook 'Passed' (output above)"
    fi
fi

say "took $((SECONDS - started)) s"
summary
((failed == 0))
