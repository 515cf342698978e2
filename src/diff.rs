//! Unified diffs that `git apply` and `patch -p1` accept.

use similar::{ChangeTag, TextDiff};

/// The diff turning `old` into `new` for `path` (relative, `/`-separated), with `a/`, `b/` prefixes.
/// Empty when the texts are equal.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    // Lines end at `\n` only, as git reads them: a lone `\r` (old Mac files) is not a line break
    // to `git apply`, and a last line without `\n` needs git's marker even when it ends in `\r`.
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let diff = TextDiff::from_slices(&old_lines, &new_lines);
    let mut out = format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n");
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        out.push_str(&format!("{}\n", hunk.header()));
        for change in hunk.iter_changes() {
            out.push(match change.tag() {
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
                ChangeTag::Equal => ' ',
            });
            out.push_str(change.value());
            if !change.value().ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    out
}
