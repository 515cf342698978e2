//! A tcfix finding as the editor shows it: the range in LSP positions, the rule's code, an LSP
//! severity, the message, and why the hazard hurts as related information.

use lsp_types::{DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Url};

use crate::diagnostic::{Diagnostic, Severity};
use crate::fix::Safety;
use crate::server::documents::{Encoding, LineIndex};

/// The hot-path cost in the editor's four levels. A graph break in a loop (Critical) costs the
/// whole frame, so it is shown as an error; nothing tcfix finds stops the code from running, so
/// the rest are warnings, or information when the cost is low.
pub fn severity(severity: Severity) -> DiagnosticSeverity {
    match severity {
        Severity::Critical => DiagnosticSeverity::ERROR,
        Severity::High | Severity::Medium => DiagnosticSeverity::WARNING,
        Severity::Low => DiagnosticSeverity::INFORMATION,
    }
}

pub fn to_lsp(
    diagnostic: &Diagnostic,
    uri: &Url,
    text: &str,
    lines: &LineIndex,
    encoding: Encoding,
) -> lsp_types::Diagnostic {
    let range = lines.range(diagnostic.range, text, encoding);
    let rule = diagnostic.rule;
    let mut message = diagnostic.message.clone();
    // What the quick fixes do not offer: the reason there is no fix, or the suggestion to make by hand.
    if let Some(reason) = &diagnostic.no_fix_reason {
        message.push_str(&format!(" (no fix: {reason})"));
    }
    if let Some(fix) = diagnostic.fix.as_ref().filter(|fix| fix.safety == Safety::DisplayOnly) {
        message.push_str(&format!(" (suggestion: {})", fix.title));
    }
    lsp_types::Diagnostic {
        range,
        severity: Some(severity(diagnostic.severity)),
        code: Some(NumberOrString::String(rule.code.to_string())),
        code_description: None,
        source: Some("tcfix".to_string()),
        message,
        related_information: Some(vec![DiagnosticRelatedInformation {
            location: Location { uri: uri.clone(), range },
            message: format!(
                "{} {}: {} (hover for more, or `tcfix explain {}`)",
                rule.code, rule.name, rule.why, rule.code
            ),
        }]),
        tags: None,
        data: None,
    }
}

/// A buffer that does not parse, as ruff shows it: an error at the parser's position, so the
/// editor says why the findings stopped following the edits. `None` for errors a buffer cannot
/// have (it is text already).
pub fn syntax_error(
    error: &crate::source::SourceError,
    text: &str,
    lines: &LineIndex,
    encoding: Encoding,
) -> Option<lsp_types::Diagnostic> {
    use crate::source::SourceError;
    let (line, column, message) = match error {
        SourceError::Syntax { line, column, message } => (*line, *column, format!("SyntaxError: {message}")),
        SourceError::TooDeep { line } => (line.unwrap_or(1), 1, error.to_string()),
        _ => return None,
    };
    // One-based line and column in characters, as the parser gives them, to a byte offset.
    let start = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum::<usize>();
    let column = text[start..].chars().take(column.saturating_sub(1)).map(char::len_utf8).sum::<usize>();
    let offset = ruff_text_size::TextSize::new((start + column) as u32);
    let position = lines.position(offset, text, encoding);
    Some(lsp_types::Diagnostic {
        range: lsp_types::Range::new(position, position),
        severity: Some(DiagnosticSeverity::ERROR),
        code: Some(NumberOrString::String("syntax-error".to_string())),
        source: Some("tcfix".to_string()),
        message,
        ..Default::default()
    })
}
