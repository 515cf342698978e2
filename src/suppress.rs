//! Suppression comments: `# tcfix: ignore[TCF101]` or `# noqa: TCF101` on a finding's line (a bare
//! `# tcfix: ignore` or `# noqa` silences every rule there), `# tcfix: ignore-file` (optionally
//! `[TCF2]`) on a line of its own for the whole file. Codes may be prefixes or rule names. Also
//! `--add-noqa`: the edits that write `# noqa: CODE` for the findings a file has now.

use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

use ruff_python_ast::token::TokenKind;
use ruff_source_file::LineRanges;
use ruff_text_size::{Ranged, TextSize};

use crate::diagnostic::Diagnostic;
use crate::fix::Edit;
use crate::rules::{Rule, Selection};
use crate::source::SourceFile;

/// Which rules a comment silences: all, or those its codes name.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Silenced {
    All,
    Rules(Vec<String>),
}

impl Silenced {
    fn covers(&self, rule: &Rule) -> bool {
        match self {
            Silenced::All => true,
            Silenced::Rules(codes) => Selection::names(codes, rule),
        }
    }
}

#[derive(Debug, Default)]
pub struct Suppressions {
    file: Vec<Silenced>,
    /// One-based line -> what the comments on it silence.
    lines: HashMap<usize, Vec<Silenced>>,
}

impl Suppressions {
    pub fn of(source: &SourceFile) -> Self {
        let mut suppressions = Self::default();
        for token in source.parsed.tokens().iter().filter(|t| t.kind() == TokenKind::Comment) {
            let comment = &source.text[token.range()];
            let own_line = source.text[source.text.line_start(token.start()).to_usize()..token.start().to_usize()]
                .trim()
                .is_empty();
            let line = source.line_column(token.start()).0;
            // `# noqa: TCF101  # tcfix: ignore[TCF2]`: one token, several directives.
            for part in comment.split('#').map(str::trim).filter(|p| !p.is_empty()) {
                match parse_directive(part) {
                    Some(Directive::File(silenced)) if own_line => suppressions.file.push(silenced),
                    Some(Directive::Line(silenced)) => suppressions.lines.entry(line).or_default().push(silenced),
                    _ => {}
                }
            }
        }
        suppressions
    }

    pub fn silences(&self, diagnostic: &Diagnostic, source: &SourceFile) -> bool {
        let rule = diagnostic.rule;
        if self.file.iter().any(|s| s.covers(rule)) {
            return true;
        }
        let line = source.line_column(diagnostic.range.start()).0;
        self.lines.get(&line).is_some_and(|all| all.iter().any(|s| s.covers(rule)))
    }
}

enum Directive {
    File(Silenced),
    Line(Silenced),
}

fn parse_directive(comment: &str) -> Option<Directive> {
    if let Some(rest) = strip_prefix_ignore_case(comment, "noqa") {
        let rest = rest.trim_start();
        return Some(Directive::Line(match rest.strip_prefix(':') {
            Some(codes) => Silenced::Rules(codes_in(codes)),
            None if rest.is_empty() => Silenced::All,
            None => return None,
        }));
    }
    let rest = comment.strip_prefix("tcfix:")?.trim_start();
    let (directive, codes) = match rest.split_once('[') {
        Some((directive, codes)) => (directive.trim(), Some(codes.split(']').next().unwrap_or(""))),
        None => (rest.trim(), None),
    };
    let silenced = codes.map_or(Silenced::All, |codes| Silenced::Rules(codes_in(codes)));
    match directive {
        "ignore" => Some(Directive::Line(silenced)),
        "ignore-file" => Some(Directive::File(silenced)),
        _ => None,
    }
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &text[prefix.len()..])
}

/// `TCF101, TCF2 print-in-compiled-code` -> the codes, prefixes and names listed.
fn codes_in(list: &str) -> Vec<String> {
    list.split([',', ' ']).map(str::trim).filter(|code| !code.is_empty()).map(str::to_string).collect()
}

/// `--add-noqa`: for each line with findings, `  # noqa: CODE, ...` at its end (or the codes
/// added to a `# noqa:` already there). Lines that end inside a string or in a backslash
/// continuation are left alone and returned, so the caller can say which stay unsuppressed.
pub fn noqa_edits(source: &SourceFile, diagnostics: &[Diagnostic]) -> (Vec<Edit>, Vec<usize>) {
    let mut codes_by_line: BTreeMap<usize, (TextSize, Vec<&str>)> = BTreeMap::new();
    for diagnostic in diagnostics {
        let line = source.line_column(diagnostic.range.start()).0;
        let entry = codes_by_line.entry(line).or_insert((diagnostic.range.start(), Vec::new()));
        if !entry.1.contains(&diagnostic.rule.code) {
            entry.1.push(diagnostic.rule.code);
        }
    }
    let mut edits = Vec::new();
    let mut skipped = Vec::new();
    for (line, (offset, codes)) in codes_by_line {
        let end = source.text.line_end(offset);
        if ends_inside_string(source, end) {
            skipped.push(line);
            continue;
        }
        let line_text = &source.text[source.text.line_start(offset).to_usize()..end.to_usize()];
        // After a backslash continuation a comment is a syntax error.
        if line_text.trim_end().ends_with('\\') {
            skipped.push(line);
            continue;
        }
        let codes = codes.join(", ");
        edits.push(match existing_noqa_codes_end(source, offset, line_text) {
            Some(at) => Edit::insert(at, format!(", {codes}")),
            None => Edit::insert(end, format!("  # noqa: {codes}")),
        });
    }
    (edits, skipped)
}

/// Where the code list of a `# noqa: ...` comment on this line ends.
fn existing_noqa_codes_end(source: &SourceFile, offset: TextSize, line_text: &str) -> Option<TextSize> {
    let comment_token =
        source.parsed.tokens().iter().rfind(|t| {
            t.kind() == TokenKind::Comment && source.line_column(t.start()).0 == source.line_column(offset).0
        })?;
    let comment = &source.text[comment_token.range()];
    let at = comment.to_ascii_lowercase().find("noqa:")?;
    let codes = &comment[at + 5..];
    let codes_len = codes.find('#').unwrap_or(codes.len());
    let trimmed = codes[..codes_len].trim_end().len();
    debug_assert!(line_text.contains(comment));
    Some(comment_token.start() + TextSize::try_from(at + 5 + trimmed).ok()?)
}

fn ends_inside_string(source: &SourceFile, offset: TextSize) -> bool {
    let tokens = source.parsed.tokens();
    let after = tokens.partition_point(|token| token.end() <= offset);
    tokens.get(after).is_some_and(|token| token.start() < offset)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::fix::edit::apply_edits;

    const MODEL: &str = "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n        print(x)LINE\n        return x\n";

    fn findings(comment: &str) -> usize {
        let text = MODEL.replace("LINE", comment);
        crate::check_source(Path::new("m.py"), &text, &crate::rules::Settings::default()).unwrap().len()
    }

    #[test]
    fn comments_silence_the_rules_they_name() {
        assert_eq!(findings(""), 1);
        assert_eq!(findings("  # noqa: TCF101"), 0);
        assert_eq!(findings("  # NOQA:TCF1"), 0, "prefixes, any case");
        assert_eq!(findings("  # noqa"), 0, "bare noqa silences all");
        assert_eq!(findings("  # noqa: E501"), 1, "other tools' codes do not");
        assert_eq!(findings("  # tcfix: ignore[print-in-compiled-code]"), 0, "rule names");
        assert_eq!(findings("  # tcfix: ignore[TCF202]"), 1);
        assert_eq!(findings("  # type: ignore  # tcfix: ignore"), 0, "several directives in one comment");
        assert_eq!(findings("\n# tcfix: ignore-file[TCF1]"), 0);
        assert_eq!(findings("  # tcfix: ignore-file"), 1, "ignore-file only on a line of its own");
    }

    #[test]
    fn add_noqa_leaves_a_backslash_continued_line_alone() {
        let text = MODEL.replace("print(x)LINE", "print(x, \\\n              x)");
        let source = SourceFile::parse(Path::new("m.py"), text.clone()).unwrap();
        let diagnostics = crate::check_source(Path::new("m.py"), &text, &crate::rules::Settings::default()).unwrap();
        let (edits, skipped) = noqa_edits(&source, &diagnostics);
        assert!(edits.is_empty(), "a comment after `\\` would not parse");
        assert_eq!(skipped, vec![7]);
    }

    #[test]
    fn add_noqa_writes_or_extends_the_comment() {
        for (line, expected) in [("", "print(x)  # noqa: TCF101"), ("  # noqa: E501", "print(x)  # noqa: E501, TCF101")]
        {
            let text = MODEL.replace("LINE", line);
            let source = SourceFile::parse(Path::new("m.py"), text.clone()).unwrap();
            let diagnostics =
                crate::check_source(Path::new("m.py"), &text, &crate::rules::Settings::default()).unwrap();
            let (edits, skipped) = noqa_edits(&source, &diagnostics);
            assert!(skipped.is_empty());
            let fixed = apply_edits(&text, &edits.iter().collect::<Vec<_>>());
            assert!(fixed.contains(expected), "{fixed}");
            let remaining = crate::check_source(Path::new("m.py"), &fixed, &crate::rules::Settings::default()).unwrap();
            assert!(remaining.is_empty(), "the written comment silences the finding");
        }
    }
}
