//! `--output-format markdown`: a report to post on a pull request. A title, a table of the
//! findings by category and severity, then each finding: where, which rule, how bad, the message,
//! why it hurts, and its fix as a diff (the file with that one fix applied) or why it has none.

use std::fmt::Write;

use super::text::{Tally, summary};
use super::{FileFindings, Locator, by_file};
use crate::diagnostic::{Diagnostic, Severity};
use crate::diff::unified_diff;
use crate::fix::edit::apply_edits;
use crate::fix::{Fix, Safety};
use crate::rules::{Category, RULES};

const TITLE: &str = "## tcfix: torch.compile hazards";

/// The table's columns, worst first.
const SEVERITIES: [Severity; 4] = [Severity::Critical, Severity::High, Severity::Medium, Severity::Low];

pub fn render(files: &[FileFindings], unsafe_fixes: bool) -> String {
    let grouped = by_file(files);
    let diagnostics: Vec<&Diagnostic> = grouped.iter().flat_map(|(_, found)| found.iter().copied()).collect();
    let mut out = format!("{TITLE}\n\n");
    if diagnostics.is_empty() {
        out.push_str("No hazards found.\n");
        return out;
    }
    let mut tally = Tally::default();
    for file in files {
        tally.add(file.diagnostics);
    }
    let _ = writeln!(out, "{}\n", escape_text(&summary(tally, unsafe_fixes)));
    table(&mut out, &diagnostics);
    for (file, found) in &grouped {
        let locator = Locator::new(file.text);
        for diagnostic in found {
            finding(&mut out, file, &locator, diagnostic, unsafe_fixes);
        }
    }
    out
}

/// Rows: the categories found, in rule-code order; columns: the severities, then the total.
fn table(out: &mut String, diagnostics: &[&Diagnostic]) {
    let mut categories: Vec<Category> = Vec::new();
    for rule in RULES.iter().copied().chain(diagnostics.iter().map(|d| d.rule)) {
        if !categories.contains(&rule.category) && diagnostics.iter().any(|d| d.rule.category == rule.category) {
            categories.push(rule.category);
        }
    }
    let count = |category: Option<Category>, severity: Option<Severity>| {
        diagnostics
            .iter()
            .filter(|d| category.is_none_or(|category| d.rule.category == category))
            .filter(|d| severity.is_none_or(|severity| d.severity == severity))
            .count()
    };
    let header: Vec<String> = SEVERITIES.iter().map(Severity::to_string).collect();
    let _ = writeln!(out, "| category | {} | total |", header.join(" | "));
    let _ = writeln!(out, "|---|{}---:|", "---:|".repeat(SEVERITIES.len()));
    let rows = categories.iter().map(|category| (category.to_string(), Some(*category)));
    for (name, category) in rows.chain([("**total**".to_string(), None)]) {
        let cells: Vec<String> =
            SEVERITIES.iter().map(|severity| count(category, Some(*severity)).to_string()).collect();
        let _ = writeln!(out, "| {name} | {} | {} |", cells.join(" | "), count(category, None));
    }
    out.push('\n');
}

fn finding(out: &mut String, file: &FileFindings, locator: &Locator, diagnostic: &Diagnostic, unsafe_fixes: bool) {
    let start = locator.position(diagnostic.range.start());
    let rule = diagnostic.rule;
    let _ = writeln!(
        out,
        "### {} {} {}\n",
        code_span(&format!("{}:{}:{}", file.path, start.line, start.column)),
        rule.code,
        rule.name
    );
    let _ = writeln!(out, "**{}** · {}\n", diagnostic.severity, rule.category);
    let _ = writeln!(out, "{}\n", escape_text(&diagnostic.message));
    let _ = writeln!(out, "**Why it hurts:** {}\n", escape_text(rule.why));
    match (&diagnostic.fix, &diagnostic.no_fix_reason) {
        (Some(fix), _) => fix_section(out, file, fix, unsafe_fixes),
        (None, Some(reason)) => {
            let _ = writeln!(out, "**No fix:** {}\n", escape_text(reason));
        }
        (None, None) => {
            let _ = writeln!(out, "**No fix.**\n");
        }
    }
}

fn fix_section(out: &mut String, file: &FileFindings, fix: &Fix, unsafe_fixes: bool) {
    let how = match fix.safety {
        Safety::Safe => "safe, applied by `tcfix --apply`",
        Safety::Unsafe if unsafe_fixes => "unsafe: it may change behaviour; applied with `--unsafe-fixes`",
        Safety::Unsafe => "unsafe: it may change behaviour; applied only with `tcfix --apply --unsafe-fixes`",
        Safety::DisplayOnly => "a suggestion: tcfix never writes it",
    };
    let _ = writeln!(out, "**Fix** ({how}): {}\n", escape_text(&fix.title));
    let fixed = apply_edits(file.text, &fix.edits.iter().collect::<Vec<_>>());
    let diff = unified_diff(file.path, file.text, &fixed);
    if diff.is_empty() {
        return;
    }
    let fence = "`".repeat(longest_run(&diff, '`').max(2) + 1);
    let _ = writeln!(out, "{fence}diff\n{}{}{fence}\n", diff, if diff.ends_with('\n') { "" } else { "\n" });
}

/// Text shown as Markdown: code spans are kept, and outside them every character that Markdown
/// or HTML would read as markup is escaped, so a message renders as written.
fn escape_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(tick) = rest.find('`') {
        out.push_str(&escape_plain(&rest[..tick]));
        let after = &rest[tick..];
        let run = after.len() - after.trim_start_matches('`').len();
        let fence = &after[..run];
        // A code span ends at the next run of exactly as many backticks.
        let mut search = run;
        let mut end = None;
        while let Some(found) = after[search..].find(fence) {
            let at = search + found;
            let length = after[at..].len() - after[at..].trim_start_matches('`').len();
            if length == run {
                end = Some(at + run);
                break;
            }
            search = at + length;
        }
        match end {
            Some(end) => {
                out.push_str(&after[..end]);
                rest = &after[end..];
            }
            None => {
                out.push_str(&fence.replace('`', "\\`"));
                rest = &after[run..];
            }
        }
    }
    out.push_str(&escape_plain(rest));
    out
}

fn escape_plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '*' | '_' | '[' | ']' | '<' | '>' | '~' | '&' | '|' | '#' => {
                out.push('\\');
                out.push(c);
            }
            '\r' | '\n' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

/// `text` as one inline code span, whatever backticks it holds.
fn code_span(text: &str) -> String {
    let fence = "`".repeat(longest_run(text, '`') + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{text}{pad}{fence}")
}

fn longest_run(text: &str, c: char) -> usize {
    text.split(|other| other != c).map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_outside_code_spans_is_escaped() {
        assert_eq!(
            escape_text("`self.tokenizer(\"<image>\")` reads <image> *twice* in a_b"),
            "`self.tokenizer(\"<image>\")` reads \\<image\\> \\*twice\\* in a\\_b"
        );
        assert_eq!(escape_text("``a ` b`` and `c`"), "``a ` b`` and `c`");
        assert_eq!(escape_text("a stray ` tick"), "a stray \\` tick");
        assert_eq!(escape_text("line\nbreak"), "line break");
    }

    #[test]
    fn code_spans_and_fences_outgrow_the_backticks_inside() {
        assert_eq!(code_span("a.py:1:2"), "`a.py:1:2`");
        assert_eq!(code_span("we`ird.py:1:2"), "``we`ird.py:1:2``");
        assert_eq!(code_span("`x"), "`` `x ``");
        assert_eq!(longest_run("a ``` b ```` c", '`'), 4);
        assert_eq!(longest_run("none", '`'), 0);
    }
}
