#!/usr/bin/env bash
# The editor end to end: Neovim (headless) with the README's set-up, as written, attaches
# `tcfix server` to a Python buffer; `type_a_print.lua` types a print into `forward`, waits for the
# diagnostic, applies its quick fix through `vim.lsp.buf.code_action()` and checks the buffer.
# Needs `nvim` (Debian: apt-get install -y neovim, 0.7.2) and builds tcfix (debug) if need be.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
repo=$PWD

command -v nvim >/dev/null || { echo "tests/editor: nvim is not installed (apt-get install -y neovim)" >&2; exit 1; }
cargo build --locked --quiet
bin_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/debug
export PATH="$bin_dir:$PATH"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The README's Neovim block: from its first line to the closing fence.
awk '/^-- tcfix in Neovim/ { found = 1 } found && /^```$/ { exit } found' README.md > "$work/init.lua"
[ -s "$work/init.lua" ] || { echo "tests/editor: no Neovim block in README.md" >&2; exit 1; }

mkdir "$work/project"
cat > "$work/project/model.py" <<'PY'
import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        return x
PY

started=$(date +%s.%N)
cd "$work/project"
# -i NONE: no shada file; XDG_* keep the user's own config, state and logs out of it; no probe
# for the Python provider (Python's filetype plugin asks for it: seconds, and not what is tested).
export XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" XDG_STATE_HOME="$work/state" XDG_CACHE_HOME="$work/cache"
if ! timeout 120 nvim --headless -i NONE --cmd "let g:loaded_python3_provider = 0" -u "$work/init.lua" -c "luafile $repo/tests/editor/type_a_print.lua" model.py; then
  echo "tests/editor: failed; Neovim's LSP log:" >&2
  cat "$work/cache/nvim/lsp.log" >&2 || true
  exit 1
fi
echo "tests/editor: Neovim $(nvim --version | head -1 | cut -d' ' -f2) passed in $(python3 -c "import time; print(f'{time.time() - $started:.1f}')") s"
