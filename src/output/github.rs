//! `--output-format github`: one GitHub Actions workflow command per finding, so that each
//! finding shows as an annotation on the pull request's diff:
//!
//! ```text
//! ::error file=models/a.py,line=12,col=9,endLine=12,endColumn=30,title=TCF101 (print-in-compiled-code)::`print()` in ...
//! ```
//!
//! critical and high findings are errors, medium ones warnings, low ones notices. The message
//! says how to fix the finding, or why tcfix cannot.

use std::fmt::Write;

use super::{FileFindings, Locator, by_file};
use crate::diagnostic::{Diagnostic, Severity};
use crate::evidence::runtime_rule::is_runtime_only;
use crate::fix::Safety;

pub fn render(files: &[FileFindings]) -> String {
    let mut out = String::new();
    for (file, diagnostics) in by_file(files) {
        let locator = Locator::new(file.text);
        for diagnostic in diagnostics {
            let (start, end) = (locator.position(diagnostic.range.start()), locator.position(diagnostic.range.end()));
            let _ = writeln!(
                out,
                "::{} file={},line={},col={},endLine={},endColumn={},title={}::{}",
                command(diagnostic.severity),
                escape_property(file.path),
                start.line,
                start.column,
                end.line,
                end.column,
                escape_property(&format!("{} ({})", diagnostic.rule.code, diagnostic.rule.name)),
                escape_data(&message(diagnostic)),
            );
        }
    }
    out
}

fn command(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low => "notice",
    }
}

/// The finding's severity and message, then on a second line its fix or why it has none.
fn message(diagnostic: &Diagnostic) -> String {
    let mut message = format!("{} {}", diagnostic.severity, diagnostic.message);
    if let Some(fix) = &diagnostic.fix {
        let kind = match fix.safety {
            Safety::Safe => "Fix (`tcfix --apply`)",
            Safety::Unsafe => "Unsafe fix (`tcfix --apply --unsafe-fixes`)",
            Safety::DisplayOnly => "Suggested fix (never written by tcfix)",
        };
        let _ = write!(message, "\n{kind}: {}", fix.title);
    } else if let Some(reason) = &diagnostic.no_fix_reason {
        let _ = write!(message, "\nNo fix: {reason}");
    }
    if let Some(runtime) = &diagnostic.runtime {
        let _ = write!(message, "\n{}", runtime.describe(is_runtime_only(diagnostic.rule)));
    }
    message
}

/// A command's message: `%`, CR and LF are escaped, as GitHub's runner unescapes them.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A command's property value: also `:` and `,`, which would end the value.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_follow_the_runner() {
        assert_eq!(escape_data("100% a:b,c\r\nd"), "100%25 a:b,c%0D%0Ad");
        assert_eq!(escape_property("dir,1/a:b%.py\n"), "dir%2C1/a%3Ab%25.py%0A");
        // `%` first: an escape's own `%` is not escaped again.
        assert_eq!(escape_property("%0A"), "%250A");
    }
}
