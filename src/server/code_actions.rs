//! The quick fixes on a finding: its fix (Safe ones preferred, Unsafe ones labelled so),
//! `# noqa: CODE` on its line, and for the whole buffer "fix all safe hazards", as `--apply`
//! would. DisplayOnly suggestions are never written, so they are no action (the diagnostic's
//! message quotes them).

// The LSP types take std's HashMap.
use std::collections::HashMap;

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, OneOf, OptionalVersionedTextDocumentIdentifier,
    TextDocumentEdit, TextEdit, Url, WorkspaceEdit,
};
use ruff_text_size::{TextRange, TextSize};

use crate::diagnostic::Diagnostic;
use crate::fix::{Edit, Safety};
use crate::server::diagnostics::to_lsp;
use crate::server::documents::{Analysis, Document, Encoding, LineIndex};
use crate::server::workspace::Workspace;
use crate::source::SourceFile;

/// `source.fixAll.tcfix`: what an editor's "fix all on save" asks for.
pub fn fix_all_kind() -> CodeActionKind {
    CodeActionKind::new("source.fixAll.tcfix")
}

/// The buffer and its analysis, to build edits against.
struct Buffer<'a> {
    uri: &'a Url,
    document: &'a Document,
    analysis: &'a Analysis,
    lines: LineIndex,
    encoding: Encoding,
}

pub fn code_actions(
    params: &CodeActionParams,
    document: &Document,
    workspace: &Workspace,
    encoding: Encoding,
) -> Vec<CodeActionOrCommand> {
    // Findings of an older text (the buffer does not parse now) have no edits that still apply.
    let Some(analysis) = document.analysis.as_ref().filter(|analysis| analysis.is_current(document)) else {
        return Vec::new();
    };
    let buffer =
        Buffer { uri: &params.text_document.uri, document, analysis, lines: LineIndex::new(&document.text), encoding };
    let start = buffer.lines.offset(params.range.start, &document.text, encoding);
    let end = buffer.lines.offset(params.range.end, &document.text, encoding);
    let touched = |diagnostic: &&Diagnostic| {
        let range = diagnostic.range;
        range.start().to_usize() <= end && start <= range.end().to_usize()
    };
    let wanted = |kind: &CodeActionKind| match &params.context.only {
        Some(kinds) => kinds
            .iter()
            .any(|only| kind.as_str() == only.as_str() || kind.as_str().starts_with(&format!("{}.", only.as_str()))),
        None => true,
    };
    let mut actions = Vec::new();
    if wanted(&CodeActionKind::QUICKFIX) {
        for diagnostic in analysis.diagnostics.iter().filter(touched) {
            actions.extend(buffer.fix(diagnostic));
            actions.extend(buffer.noqa(diagnostic));
        }
    }
    // Fixing all re-analyses the buffer after each pass: only on a finding, or when asked for
    // by kind (on save), not on every move of the cursor.
    let asked = params.context.only.is_some() || analysis.diagnostics.iter().any(|d| touched(&d));
    if asked && wanted(&fix_all_kind()) {
        actions.extend(buffer.fix_all_safe(workspace));
    }
    actions.into_iter().map(CodeActionOrCommand::CodeAction).collect()
}

impl Buffer<'_> {
    /// The finding's own fix, when it is one the user may apply (Safe or Unsafe).
    fn fix(&self, diagnostic: &Diagnostic) -> Option<CodeAction> {
        let fix = diagnostic.fix.as_ref()?;
        let code = diagnostic.rule.code;
        let title = match fix.safety {
            Safety::Safe => format!("{code}: {}", fix.title),
            Safety::Unsafe => format!("{code} (unsafe fix): {}", fix.title),
            Safety::DisplayOnly => return None,
        };
        Some(self.action(title, CodeActionKind::QUICKFIX, &fix.edits, diagnostic, fix.safety == Safety::Safe))
    }

    /// `# noqa: CODE` at the end of the finding's line (or the code added to a `# noqa:` there).
    fn noqa(&self, diagnostic: &Diagnostic) -> Option<CodeAction> {
        let source = SourceFile::parse(&self.document.path, self.document.text.clone()).ok()?;
        let (edits, _unsafe_lines) = crate::suppress::noqa_edits(&source, std::slice::from_ref(diagnostic));
        if edits.is_empty() {
            return None; // the line ends inside a string or continues with `\`
        }
        let code = diagnostic.rule.code;
        let title = format!("{code}: Silence with `# noqa: {code}`");
        Some(self.action(title, CodeActionKind::QUICKFIX, &edits, diagnostic, false))
    }

    /// Every Safe fix in the buffer, applied to a fixpoint as `--apply` does, as one edit.
    fn fix_all_safe(&self, workspace: &Workspace) -> Option<CodeAction> {
        let safe = |d: &Diagnostic| d.fix.as_ref().is_some_and(|fix| fix.safety == Safety::Safe);
        if !self.analysis.diagnostics.iter().any(safe) {
            return None;
        }
        let path = &self.document.path;
        let outcome = crate::fix_known(
            &workspace.relative(path),
            self.analysis.text.clone(),
            self.analysis.diagnostics.clone(),
            &self.analysis.facts,
            &workspace.settings.for_file(path),
            workspace.scope.as_deref(),
            false,
        )
        .ok()?;
        if outcome.applied.is_empty() {
            return None;
        }
        let edit = changed_span(&self.analysis.text, &outcome.text);
        let count = outcome.applied.len();
        let title =
            format!("Fix all {count} safe tcfix {} in this file", if count == 1 { "hazard" } else { "hazards" });
        let mut action = self.action(title, fix_all_kind(), &[edit], &self.analysis.diagnostics[0], false);
        action.diagnostics = None;
        Some(action)
    }

    fn action(
        &self,
        title: String,
        kind: CodeActionKind,
        edits: &[Edit],
        diagnostic: &Diagnostic,
        preferred: bool,
    ) -> CodeAction {
        let text = &self.document.text;
        let edits = edits
            .iter()
            .map(|edit| {
                OneOf::Left(TextEdit {
                    range: self.lines.range(edit.range, text, self.encoding),
                    new_text: edit.content.clone(),
                })
            })
            .collect();
        // Versioned, so that an editor whose buffer moved on refuses the edit instead of
        // writing it at the wrong place.
        let document_edit = TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier {
                uri: self.uri.clone(),
                version: Some(self.document.version),
            },
            edits,
        };
        CodeAction {
            title,
            kind: Some(kind),
            diagnostics: Some(vec![to_lsp(diagnostic, self.uri, text, &self.lines, self.encoding)]),
            edit: Some(WorkspaceEdit {
                changes: None::<HashMap<Url, Vec<TextEdit>>>,
                document_changes: Some(lsp_types::DocumentChanges::Edits(vec![document_edit])),
                change_annotations: None,
            }),
            command: None,
            is_preferred: preferred.then_some(true),
            disabled: None,
            data: None,
        }
    }
}

/// One edit from `before` to `after`: the span between their common prefix and suffix (an edit
/// of the whole text would move the editor's cursor and folds).
fn changed_span(before: &str, after: &str) -> Edit {
    let prefix = before.bytes().zip(after.bytes()).take_while(|(a, b)| a == b).count();
    let mut prefix = prefix;
    while !before.is_char_boundary(prefix) || !after.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let longest_suffix = before.len().min(after.len()) - prefix;
    let mut suffix =
        before.bytes().rev().zip(after.bytes().rev()).take(longest_suffix).take_while(|(a, b)| a == b).count();
    while !before.is_char_boundary(before.len() - suffix) || !after.is_char_boundary(after.len() - suffix) {
        suffix -= 1;
    }
    let range = TextRange::new(TextSize::new(prefix as u32), TextSize::new((before.len() - suffix) as u32));
    Edit::replace(range, &after[prefix..after.len() - suffix])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fix::edit::apply_edits;

    #[test]
    fn the_changed_span_is_between_the_common_prefix_and_suffix() {
        for (before, after) in [
            ("a = 1\nb = 2\n", "a = 1\nc = 2\n"),
            ("aaa", "aaaa"),
            ("x é y", "x è y"),
            ("é", ""),
            ("", "😀"),
            ("same", "same"),
        ] {
            let edit = changed_span(before, after);
            assert_eq!(apply_edits(before, &[&edit]), after, "{before:?} -> {after:?}: {edit:?}");
        }
        assert_eq!(changed_span("a = 1\nb = 2\n", "a = 1\nc = 2\n").content, "c");
    }
}
