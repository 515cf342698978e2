# The pass/fail tally the packaging tests share. Source it after setting `label`:
#   label=wheel; source "$(dirname "${BASH_SOURCE[0]}")/tally.sh"
passed=0
failed=0
skipped=0

say() { echo "packaging($label): $*"; }
ok() {
    passed=$((passed + 1))
    say "ok   $*"
}
fail() {
    failed=$((failed + 1))
    say "FAIL $*" >&2
}
skip() {
    skipped=$((skipped + 1))
    say "skip $*"
}
# The closing line CI reads: `packaging: N passed, N failed`.
summary() {
    if ((skipped > 0)); then
        echo "packaging: $passed passed, $failed failed, $skipped skipped"
    else
        echo "packaging: $passed passed, $failed failed"
    fi
}
# A step the later checks cannot do without: stop here, counting it as a failure.
die() {
    fail "$*"
    summary
    exit 1
}
# `show FILE`: a command's output, indented, for a failure message.
show() { sed 's/^/    | /' "$1" >&2; }
