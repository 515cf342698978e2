//! The default report: one line per finding, `path:line:col: CODE severity message [*]` (and,
//! when it cannot be fixed, an indented line saying why), then a summary line.

use std::fmt::Write;

use ruff_source_file::LineIndex;

use crate::diagnostic::Diagnostic;
use crate::fix::Safety;

/// The report lines of one file's findings.
pub fn diagnostics(path: &str, text: &str, diagnostics: &[Diagnostic], unsafe_fixes: bool) -> String {
    let lines = LineIndex::from_source_text(text);
    let mut out = String::new();
    for diagnostic in diagnostics {
        let location = lines.line_column(diagnostic.range.start(), text);
        let fixable = diagnostic.fix.as_ref().is_some_and(|fix| fix.is_applicable(unsafe_fixes));
        let _ = writeln!(
            out,
            "{path}:{}:{}: {} {} {}{}",
            location.line,
            location.column,
            diagnostic.rule.code,
            diagnostic.severity,
            diagnostic.message,
            if fixable { " [*]" } else { "" }
        );
        if let Some(reason) = &diagnostic.no_fix_reason {
            let _ = writeln!(out, "    no fix: {reason}");
        }
    }
    out
}

/// Counts for the summary line.
#[derive(Default, Debug, Clone, Copy)]
pub struct Tally {
    pub found: usize,
    pub safe: usize,
    pub unsafe_only: usize,
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

/// "Found 3 hazards (2 fixable with `--apply`, 1 more with `--unsafe-fixes`)."
pub fn summary(tally: Tally, unsafe_fixes: bool) -> String {
    if tally.found == 0 {
        return "All checks passed!".to_string();
    }
    let noun = if tally.found == 1 { "hazard" } else { "hazards" };
    let mut parts = Vec::new();
    let safe = if unsafe_fixes { tally.safe + tally.unsafe_only } else { tally.safe };
    if safe > 0 {
        parts.push(format!("{safe} fixable with `--apply`"));
    }
    if !unsafe_fixes && tally.unsafe_only > 0 {
        let more = if safe > 0 { " more" } else { "" };
        parts.push(format!("{}{more} with `--unsafe-fixes`", tally.unsafe_only));
    }
    if parts.is_empty() {
        format!("Found {} {noun}.", tally.found)
    } else {
        format!("Found {} {noun} ({}).", tally.found, parts.join(", "))
    }
}
