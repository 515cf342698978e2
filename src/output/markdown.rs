//! `--output-format markdown`: a report to post on a pull request. A title, what the run
//! covers (`--diff-base`, `--baseline`), the summary and a table of the findings by category and
//! severity, then each finding, worst first: where, which rule, how bad, the message, why it
//! hurts, and its fix or why it has none. A safe fix on a few consecutive lines is a GitHub
//! suggestion block (the new text of the lines it replaces; in a review comment on those lines
//! GitHub applies it with one click), any other fix a diff (the file with that one fix applied).
//!
//! The report is capped (by default at one pull-request comment, 65,536 characters): when the
//! findings do not all fit in full, the rest are listed one line each while they fit, and a last
//! line says how many were left out and how to see them all.

use rustc_hash::FxHashMap as HashMap;
use std::fmt::Write;

use super::text::{Tally, summary};
use super::{FileFindings, Locator, by_file};
use crate::diagnostic::{Diagnostic, Severity};
use crate::diff::unified_diff;
use crate::fix::edit::apply_edits;
use crate::fix::{Fix, Safety};
use crate::rules::{Category, RULES};

const TITLE: &str = "## tcfix: torch.compile hazards";

/// The most a GitHub pull-request (or issue) comment holds, in characters.
pub const COMMENT_CHARS: usize = 65_536;

/// A safe fix spanning more lines than this is shown as a diff, not a suggestion.
const SUGGESTION_LINES: usize = 8;

/// The table's columns, worst first.
const SEVERITIES: [Severity; 4] = [Severity::Critical, Severity::High, Severity::Medium, Severity::Low];

/// How a review report is shaped.
#[derive(Clone, Debug)]
pub struct Review<'a> {
    /// The cap in characters; 0 for none.
    pub max_chars: usize,
    /// What the run covers and leaves out (`Scope::describe`), shown under the title.
    pub scope: Option<&'a str>,
    /// How the summary names the command that applies fixes (`` `--apply` ``).
    pub apply: &'a str,
}

impl Default for Review<'_> {
    fn default() -> Self {
        Self { max_chars: COMMENT_CHARS, scope: None, apply: "`--apply`" }
    }
}

/// The report with the default shape: one comment's worth.
pub fn render(files: &[FileFindings], unsafe_fixes: bool) -> String {
    review(files, unsafe_fixes, &Review::default())
}

pub fn review(files: &[FileFindings], unsafe_fixes: bool, shape: &Review) -> String {
    let grouped = by_file(files);
    // Worst first; within a severity, by path and position (the sort is stable).
    let mut found: Vec<(&FileFindings, &Diagnostic)> =
        grouped.iter().flat_map(|(file, found)| found.iter().map(move |d| (*file, *d))).collect();
    found.sort_by_key(|(_, diagnostic)| std::cmp::Reverse(diagnostic.severity));

    let mut out = format!("{TITLE}\n\n");
    if let Some(scope) = shape.scope {
        let _ = writeln!(out, "{}\n", escape_text(scope));
    }
    if found.is_empty() {
        out.push_str("No hazards found.\n");
        return out;
    }
    let mut tally = Tally::default();
    for file in files {
        tally.add(file.diagnostics);
    }
    let _ = writeln!(out, "{}\n", escape_text(&summary(tally, unsafe_fixes, shape.apply)));
    let diagnostics: Vec<&Diagnostic> = found.iter().map(|(_, d)| *d).collect();
    table(&mut out, &diagnostics);

    let limit = if shape.max_chars == 0 { usize::MAX } else { shape.max_chars };
    let mut used = out.chars().count();
    let mut locators: HashMap<&str, Locator> = HashMap::default();
    let mut blocks = Vec::with_capacity(found.len());
    let mut suggested = Suggested::default();
    for (position, (file, diagnostic)) in found.iter().enumerate() {
        let locator = locators.entry(file.path).or_insert_with(|| Locator::new(file.text));
        let mut block = String::new();
        if position == 0 || found[position - 1].1.severity != diagnostic.severity {
            let count = found.iter().filter(|(_, d)| d.severity == diagnostic.severity).count();
            let name = diagnostic.severity.to_string();
            let _ = writeln!(block, "### {}{} ({count})\n", name[..1].to_uppercase(), &name[1..]);
        }
        finding(&mut block, file, locator, diagnostic, unsafe_fixes, &mut suggested);
        blocks.push(block);
    }
    // In full while they fit; when not all do, in three quarters of the room, so that the rest
    // can be listed one line each (more places to look at than full sections would name).
    let everything: usize = blocks.iter().map(|block| block.chars().count()).sum();
    let in_full =
        if used.saturating_add(everything) <= limit { limit } else { used + (limit - used.min(limit)) / 4 * 3 };
    let mut shown = 0;
    for block in &blocks {
        if !fits(used, block, &found[shown + 1..], in_full) {
            break;
        }
        used += block.chars().count();
        out.push_str(block);
        shown += 1;
    }
    // Then one line each (and the blank line that ends the list).
    if shown < found.len() {
        let mut heading = "### More findings, one line each\n\n".to_string();
        while let Some((file, diagnostic)) = found.get(shown) {
            let line = format!("{heading}{}", one_line(file, &locators[file.path], diagnostic));
            if !fits(used + 1, &line, &found[shown + 1..], limit) {
                break;
            }
            used += line.chars().count();
            out.push_str(&line);
            heading.clear();
            shown += 1;
        }
        if heading.is_empty() {
            out.push('\n');
        }
    }
    if shown < found.len() {
        out.push_str(&left_out(&found[shown..], shape.max_chars));
    }
    out
}

/// Whether `block` fits after `used` characters, with the line counting `rest` after it.
fn fits(used: usize, block: &str, rest: &[(&FileFindings, &Diagnostic)], limit: usize) -> bool {
    let footer = if rest.is_empty() { 0 } else { left_out(rest, limit).chars().count() };
    used.saturating_add(block.chars().count()).saturating_add(footer) <= limit
}

/// "**12 more findings are not shown** (3 high, 9 low), to keep this report within ..."
fn left_out(rest: &[(&FileFindings, &Diagnostic)], limit: usize) -> String {
    let counts: Vec<String> = SEVERITIES
        .iter()
        .map(|severity| (severity, rest.iter().filter(|(_, d)| d.severity == *severity).count()))
        .filter(|(_, count)| *count > 0)
        .map(|(severity, count)| format!("{count} {severity}"))
        .collect();
    let (more, are) = if rest.len() == 1 { ("finding is", "it") } else { ("findings are", "them all") };
    format!(
        "**{} more {more} not shown** ({}), to keep this report within {} characters: \
         `--markdown-max-chars 0` shows {are}, and the default output format lists each on one line.\n",
        rest.len(),
        counts.join(", "),
        thousands(limit)
    )
}

/// `65,536`.
fn thousands(number: usize) -> String {
    let digits = number.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
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

/// The suggestion blocks written so far, each with the finding it was written under: two rules
/// on one line (a print that also reads `.item()`) often offer the same edit, and a reviewer
/// should see one block for it, not two to click.
type Suggested = HashMap<(String, Suggestion), String>;

fn finding(
    out: &mut String,
    file: &FileFindings,
    locator: &Locator,
    diagnostic: &Diagnostic,
    unsafe_fixes: bool,
    suggested: &mut Suggested,
) {
    let start = locator.position(diagnostic.range.start());
    let rule = diagnostic.rule;
    let _ = writeln!(
        out,
        "#### {} {} {}\n",
        code_span(&format!("{}:{}:{}", file.path, start.line, start.column)),
        rule.code,
        rule.name
    );
    let _ = writeln!(out, "**{}** · {}\n", diagnostic.severity, rule.category);
    let _ = writeln!(out, "{}\n", escape_text(&diagnostic.message));
    let _ = writeln!(out, "**Why it hurts:** {}\n", escape_text(rule.why));
    if let Some(runtime) = &diagnostic.runtime {
        let described = runtime.describe(crate::evidence::runtime_rule::is_runtime_only(rule));
        let _ = writeln!(out, "**At runtime:** {}\n", escape_text(&described));
    }
    match (&diagnostic.fix, &diagnostic.no_fix_reason) {
        (Some(fix), _) => {
            let here = format!("{} {}", code_span(&format!("{}:{}", file.path, start.line)), rule.code);
            fix_section(out, file, fix, unsafe_fixes, (suggested, here))
        }
        (None, Some(reason)) => {
            let _ = writeln!(out, "**No fix:** {}\n", escape_text(reason));
        }
        (None, None) => {
            let _ = writeln!(out, "**No fix.**\n");
        }
    }
}

/// "- `models/vlm.py:12:9` TCF101 **high** `print()` in ... breaks the graph"
fn one_line(file: &FileFindings, locator: &Locator, diagnostic: &Diagnostic) -> String {
    let start = locator.position(diagnostic.range.start());
    format!(
        "- {} {} **{}** {}\n",
        code_span(&format!("{}:{}:{}", file.path, start.line, start.column)),
        diagnostic.rule.code,
        diagnostic.severity,
        escape_text(&diagnostic.message)
    )
}

/// The fix's title, then its suggestion block or diff; `suggested` holds the blocks already
/// written and where (`here`: this finding).
fn fix_section(
    out: &mut String,
    file: &FileFindings,
    fix: &Fix,
    unsafe_fixes: bool,
    (suggested, here): (&mut Suggested, String),
) {
    let how = match fix.safety {
        Safety::Safe => "safe, applied by `tcfix --apply`",
        Safety::Unsafe if unsafe_fixes => "unsafe: it may change behaviour; applied with `--unsafe-fixes`",
        Safety::Unsafe => "unsafe: it may change behaviour; applied only with `tcfix --apply --unsafe-fixes`",
        Safety::DisplayOnly => "a suggestion: tcfix never writes it",
    };
    let _ = writeln!(out, "**Fix** ({how}): {}\n", escape_text(&fix.title));
    if fix.safety == Safety::Safe
        && let Some(suggestion) = Suggestion::of(file.text, fix)
    {
        let lines = if suggestion.first == suggestion.last {
            format!("line {}", suggestion.first)
        } else {
            format!("lines {}–{}", suggestion.first, suggestion.last)
        };
        let key = (file.path.to_string(), suggestion);
        if let Some(first) = suggested.get(&key) {
            let _ = writeln!(out, "The same change as the suggestion under {first} ({lines}).\n");
            return;
        }
        let fence = "`".repeat(longest_run(&key.1.text, '`').max(2) + 1);
        let _ = writeln!(out, "Replaces {lines}:\n\n{fence}suggestion\n{}\n{fence}\n", key.1.text);
        suggested.insert(key, here);
        return;
    }
    let fixed = apply_edits(file.text, &fix.edits.iter().collect::<Vec<_>>());
    let diff = unified_diff(file.path, file.text, &fixed);
    if diff.is_empty() {
        return;
    }
    let fence = "`".repeat(longest_run(&diff, '`').max(2) + 1);
    let _ = writeln!(out, "{fence}diff\n{}{}{fence}\n", diff, if diff.ends_with('\n') { "" } else { "\n" });
}

/// A fix as GitHub's suggested change: lines `first..=last` (one-based) of the file become
/// `text` (lines ending in `\n`, without the last one's).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Suggestion {
    pub first: usize,
    pub last: usize,
    pub text: String,
}

impl Suggestion {
    /// The fix's edits as one replacement of the whole lines they touch, when those are at most
    /// [`SUGGESTION_LINES`] consecutive lines.
    pub fn of(text: &str, fix: &Fix) -> Option<Self> {
        let start = fix.edits.iter().map(|edit| usize::from(edit.range.start())).min()?;
        let end = fix.edits.iter().map(|edit| usize::from(edit.range.end())).max()?;
        let from = text[..start].rfind('\n').map_or(0, |newline| newline + 1);
        let to = text[end..].find('\n').map_or(text.len(), |newline| end + newline + 1);
        let first = text[..from].matches('\n').count() + 1;
        let last = first + text[from..to].trim_end_matches('\n').matches('\n').count();
        if last + 1 - first > SUGGESTION_LINES {
            return None;
        }
        let shift = ruff_text_size::TextSize::try_from(from).ok()?;
        let edits: Vec<crate::fix::edit::Edit> = fix
            .edits
            .iter()
            .map(|edit| {
                let mut edit = edit.clone();
                edit.range -= shift;
                edit
            })
            .collect();
        let replaced = apply_edits(&text[from..to], &edits.iter().collect::<Vec<_>>());
        // A comment's lines end in `\n`, whatever the file's do.
        let replaced = replaced.replace("\r\n", "\n");
        Some(Self { first, last, text: replaced.strip_suffix('\n').unwrap_or(&replaced).to_string() })
    }
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
