//! Unified diffs that `git apply` and `patch -p1` accept.

use similar::TextDiff;

/// The diff turning `old` into `new` for `path` (relative, `/`-separated), with `a/`, `b/` prefixes.
/// Empty when the texts are equal.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let diff = TextDiff::from_lines(old, new);
    let body = diff.unified_diff().context_radius(3).header(&format!("a/{path}"), &format!("b/{path}")).to_string();
    format!("diff --git a/{path} b/{path}\n{body}")
}
