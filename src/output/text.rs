//! The text formats. `full`, the default: one line per finding,
//! `path:line:col: CODE severity message [*]` (`[*]` when `--apply` can fix it) and, when it
//! cannot be fixed, an indented line saying why; under an Unsafe fix or a DisplayOnly suggestion,
//! an indented line with its title, which says why it is not Safe. `concise`: the finding lines alone. Then, printed
//! by the caller, a summary line.

use std::fmt::Write;

use super::{FileFindings, Locator, Order, by_file};
use crate::diagnostic::Diagnostic;
use crate::evidence::runtime_rule::is_runtime_only;
use crate::fix::Safety;

/// `--output-format full`: every file's findings, in `order`.
pub fn full(files: &[FileFindings], order: Order, unsafe_fixes: bool) -> String {
    report(files, order, unsafe_fixes, true)
}

/// `--output-format concise`: one line per finding, no reason lines.
pub fn concise(files: &[FileFindings], order: Order, unsafe_fixes: bool) -> String {
    report(files, order, unsafe_fixes, false)
}

fn report(files: &[FileFindings], order: Order, unsafe_fixes: bool, reasons: bool) -> String {
    let by_file = by_file(files);
    match order {
        Order::Path => by_file
            .into_iter()
            .map(|(file, found)| lines(file.path, file.text, &found, unsafe_fixes, reasons))
            .collect(),
        Order::Severity | Order::Cost => {
            // Worst first; within a severity (or cost), the path order (the sort is stable).
            let mut found: Vec<(&FileFindings, &Diagnostic)> =
                by_file.iter().flat_map(|(file, found)| found.iter().map(move |d| (*file, *d))).collect();
            if order == Order::Severity {
                found.sort_by_key(|(_, diagnostic)| std::cmp::Reverse(diagnostic.severity));
            } else {
                found.sort_by(|(_, a), (_, b)| cost(b).partial_cmp(&cost(a)).unwrap_or(std::cmp::Ordering::Equal));
            }
            found.into_iter().map(|(file, d)| lines(file.path, file.text, &[d], unsafe_fixes, reasons)).collect()
        }
    }
}

/// What the run cost at a finding (`--sort cost`): compile time, then events; nothing seen is least.
fn cost(diagnostic: &Diagnostic) -> (f64, usize) {
    diagnostic.runtime.as_ref().and_then(|runtime| runtime.observed()).map_or((-1.0, 0), |observed| observed.cost())
}

/// The `full` report lines of one file's findings, in the order given.
pub fn diagnostics(path: &str, text: &str, diagnostics: &[Diagnostic], unsafe_fixes: bool) -> String {
    lines(path, text, &diagnostics.iter().collect::<Vec<_>>(), unsafe_fixes, true)
}

fn lines(path: &str, text: &str, diagnostics: &[&Diagnostic], unsafe_fixes: bool, reasons: bool) -> String {
    let locator = Locator::new(text);
    let mut out = String::new();
    for diagnostic in diagnostics {
        let start = locator.position(diagnostic.range.start());
        let fixable = diagnostic.fix.as_ref().is_some_and(|fix| fix.is_applicable(unsafe_fixes));
        let _ = writeln!(
            out,
            "{path}:{}:{}: {} {} {}{}",
            start.line,
            start.column,
            diagnostic.rule.code,
            diagnostic.severity,
            diagnostic.message,
            if fixable { " [*]" } else { "" }
        );
        if !reasons {
            continue;
        }
        if let Some(runtime) = &diagnostic.runtime {
            let _ = writeln!(out, "    {}", runtime.describe(is_runtime_only(diagnostic.rule)));
        }
        if let Some(reason) = &diagnostic.no_fix_reason {
            let _ = writeln!(out, "    no fix: {reason}");
        }
        // A fix `--apply` alone leaves out says what it would do and why it is not Safe.
        match diagnostic.fix.as_ref().map(|fix| (fix.safety, &fix.title)) {
            Some((Safety::Unsafe, title)) => _ = writeln!(out, "    unsafe fix (--unsafe-fixes): {title}"),
            Some((Safety::DisplayOnly, title)) => _ = writeln!(out, "    suggestion (never written): {title}"),
            _ => {}
        }
    }
    out
}

/// Counts for the summary line.
#[derive(Default, Debug, Clone, Copy)]
pub struct Tally {
    /// Findings left in the files.
    pub found: usize,
    pub safe: usize,
    pub unsafe_only: usize,
    /// Findings `--apply` fixed in this run (they are no longer among `found`).
    pub fixed: usize,
}

impl Tally {
    pub fn add(&mut self, diagnostics: &[Diagnostic]) {
        for diagnostic in diagnostics {
            self.found += 1;
            match diagnostic.fix.as_ref().map(|fix| fix.safety) {
                Some(Safety::Safe) => self.safe += 1,
                Some(Safety::Unsafe) => self.unsafe_only += 1,
                _ => {}
            }
        }
    }
}

/// "Found 3 hazards (2 fixable with `--apply`, 1 more with `--unsafe-fixes`)." and, after
/// `--apply`, as ruff says it: "Found 3 hazards (2 fixed, 1 remaining; 1 more with
/// `--unsafe-fixes`)." `apply` names what applies the fixes: `` `--apply` ``, or under pre-commit
/// the hook that does.
pub fn summary(tally: Tally, unsafe_fixes: bool, apply: &str) -> String {
    let total = tally.found + tally.fixed;
    if total == 0 {
        return "All checks passed!".to_string();
    }
    let noun = if total == 1 { "hazard" } else { "hazards" };
    let mut hints = Vec::new();
    let safe = if unsafe_fixes { tally.safe + tally.unsafe_only } else { tally.safe };
    if safe > 0 {
        hints.push(format!("{safe} fixable with {apply}"));
    }
    if !unsafe_fixes && tally.unsafe_only > 0 {
        let more = if safe > 0 || tally.fixed > 0 { " more" } else { "" };
        hints.push(format!("{}{more} with `--unsafe-fixes`", tally.unsafe_only));
    }
    let hints = hints.join(", ");
    match (tally.fixed, hints.is_empty()) {
        (0, true) => format!("Found {total} {noun}."),
        (0, false) => format!("Found {total} {noun} ({hints})."),
        (fixed, true) => format!("Found {total} {noun} ({fixed} fixed, {} remaining).", tally.found),
        (fixed, false) => format!("Found {total} {noun} ({fixed} fixed, {} remaining; {hints}).", tally.found),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_after_apply_counts_what_was_fixed_and_what_unsafe_fixes_would_add() {
        let tally = |found, safe, unsafe_only, fixed| Tally { found, safe, unsafe_only, fixed };
        assert_eq!(summary(tally(0, 0, 0, 0), false, "`--apply`"), "All checks passed!");
        assert_eq!(
            summary(tally(3, 1, 2, 0), false, "`--apply`"),
            "Found 3 hazards (1 fixable with `--apply`, 2 more with `--unsafe-fixes`)."
        );
        assert_eq!(summary(tally(0, 0, 0, 2), false, "`--apply`"), "Found 2 hazards (2 fixed, 0 remaining).");
        assert_eq!(
            summary(tally(3, 0, 2, 2), false, "`--apply`"),
            "Found 5 hazards (2 fixed, 3 remaining; 2 more with `--unsafe-fixes`)."
        );
        assert_eq!(
            summary(tally(3, 0, 2, 2), true, "`--apply`"),
            "Found 5 hazards (2 fixed, 3 remaining; 2 fixable with `--apply`)."
        );
    }
}
