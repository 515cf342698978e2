//! Hover on a finding: the rule's documentation (`tcfix explain CODE`), once per rule found there.

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};

use crate::server::documents::{Document, Encoding, LineIndex};

pub fn hover(document: &Document, position: Position, encoding: Encoding) -> Option<Hover> {
    let analysis = document.analysis.as_ref().filter(|analysis| analysis.is_current(document))?;
    let lines = LineIndex::new(&document.text);
    let offset = lines.offset(position, &document.text, encoding);
    let mut found = analysis
        .diagnostics
        .iter()
        .filter(|d| d.range.start().to_usize() <= offset && offset <= d.range.end().to_usize())
        .peekable();
    let range = lines.range(found.peek()?.range, &document.text, encoding);
    let mut sections: Vec<&str> = Vec::new();
    for diagnostic in found {
        let explanation = diagnostic.rule.explanation.trim();
        if !sections.contains(&explanation) {
            sections.push(explanation);
        }
    }
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: sections.join("\n\n---\n\n"),
        }),
        range: Some(range),
    })
}
